"""The committed dashboard JSON is what the code generates, and every panel is wired to the
Ostara InfluxDB datasource with a raw InfluxQL query."""

from __future__ import annotations

import json

from dashboards.__main__ import GENERATED, main, render
from dashboards.views import DASHBOARDS
from metrics.influxql.grafana_target import DATASOURCE_UID


def test_the_committed_json_is_what_the_code_generates():
    assert main(["--check"]) == 0
    assert sorted(p.stem for p in GENERATED.glob("*.json")) == sorted(DASHBOARDS)


def test_every_panel_has_an_influxql_target_on_the_ostara_datasource():
    for uid in DASHBOARDS:
        board = json.loads(render(uid))
        assert board["uid"] == uid
        assert board["panels"], uid
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == DATASOURCE_UID
            assert panel["targets"], (uid, panel["title"])
            for target in panel["targets"]:
                assert target["rawQuery"] is True
                assert target["datasource"]["uid"] == DATASOURCE_UID
                assert target["query"].startswith("SELECT ")
                assert "$timeFilter" in target["query"]


def test_every_variable_is_used_by_a_panel_and_queries_the_datasource():
    for uid in DASHBOARDS:
        board = json.loads(render(uid))
        queries = " ".join(t["query"] for p in board["panels"] for t in p["targets"])
        for variable in board["templating"]["list"]:
            assert f"${variable['name']}" in queries, (uid, variable["name"])
            assert variable["datasource"]["uid"] == DATASOURCE_UID
            assert variable["query"].startswith("SHOW TAG VALUES")


def test_sizes_and_throughput_are_in_binary_units_as_in_the_portal():
    # Grafana's "Bps" and "decbytes" are decimal (MB/s, GB); "binBps" and "bytes" are binary
    # (MiB/s, GiB), the units every page of the portal writes.
    for uid in DASHBOARDS:
        board = json.loads(render(uid))
        for panel in board["panels"]:
            unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
            assert unit not in ("Bps", "decbytes", "MBs", "GBs", "KBs"), (uid, panel["title"])
