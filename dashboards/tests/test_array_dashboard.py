"""The array dashboard: what the santricity collector writes, per volume, drive, controller and
host interface of the array chosen."""

from __future__ import annotations

import json
import re

from dashboards.__main__ import render
from sensors import schema


def panels() -> dict[str, dict]:
    board = json.loads(render("ostara-array"))
    assert [v["name"] for v in board["templating"]["list"]] == ["array"]
    return {panel["title"]: panel for panel in board["panels"]}


def read(panel: dict) -> tuple[str, set[str], str]:
    """(measurement, fields, unit) of a panel's one query; every field is in the schema."""
    (target,) = panel["targets"]
    query = target["query"]
    measurement = re.search(r'FROM "(\w+)"', query).group(1)
    fields = set(re.findall(r'mean\("(\w+)"\)', query))
    assert fields <= set(schema.MEASUREMENTS[measurement].fields), query
    assert '"array" =~ /^$array$/' in query
    return measurement, fields, panel["fieldConfig"]["defaults"]["unit"]


def test_volume_latency_and_iops_drive_latency_controllers_and_interfaces():
    shown = {title: read(panel) for title, panel in panels().items()}
    assert shown == {
        "Volume latency at the array": (
            "array_volume",
            {"read_latency_ms", "write_latency_ms"},
            "ms",
        ),
        "Volume IOPS": ("array_volume", {"read_iops", "write_iops"}, "iops"),
        "Volume throughput": ("array_volume", {"read_mbps", "write_mbps"}, "binBps"),
        "Drive latency": ("array_drive", {"read_latency_ms", "write_latency_ms"}, "ms"),
        "Controller CPU": ("array_controller", {"cpu_percent"}, "percent"),
        "Controller throughput": ("array_controller", {"read_mbps", "write_mbps"}, "binBps"),
        "Host interface throughput": ("array_interface", {"read_mbps", "write_mbps"}, "binBps"),
    }


def test_each_object_is_its_own_series_and_mb_per_second_become_bytes():
    by_title = panels()
    volume = by_title["Volume throughput"]["targets"][0]
    # The array says MB/s (10^6 bytes); Grafana's binBps takes bytes per second.
    assert 'mean("read_mbps") * 1000000 AS "read"' in volume["query"]
    assert volume["query"].endswith('GROUP BY time($__interval), "volume" fill(none)')
    assert volume["alias"] == "$tag_volume $col"
    assert by_title["Drive latency"]["targets"][0]["alias"] == "$tag_id $col"
    assert by_title["Host interface throughput"]["targets"][0]["alias"] == "$tag_interface $col"
