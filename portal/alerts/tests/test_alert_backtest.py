"""Backtests over real points in the test InfluxDB and recorded colour changes: what a rule
would have mailed."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from portal import influxdb as influx
from portal.alerts.models import Rule
from portal.alerts.services.backtest import backtest
from portal.health.models import StatusChange

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture
def metrics(services, settings):
    settings.INFLUXDB_DATABASE = f"backtest_{uuid.uuid4().hex[:10]}"
    influx.ensure_database()
    yield
    influx.client().drop_database(settings.INFLUXDB_DATABASE)


def write_load(now: int, hosts: dict[str, list[tuple[int, int, float]]]) -> None:
    """``hosts``: server -> (from, to, load1) spans, in seconds before now."""
    lines = []
    for host, spans in hosts.items():
        for start, end, load in spans:
            for t in range(now - start, now - end, 10):
                lines.append(f"node,server={host},role=oss load1={load} {t}")
    influx.write_lines(lines)


def test_a_threshold_backtest_counts_each_excursion_as_an_event(metrics):
    now = int(time.time())
    # oss01 busy twice for 10 minutes in the last 3 hours; oss02 never.
    write_load(
        now,
        {
            "oss01": [(10800, 9000, 4.0), (9000, 8400, 40.0), (8400, 3600, 4.0)]
            + [(3600, 3000, 40.0), (3000, 0, 4.0)],
            "oss02": [(10800, 0, 2.0)],
        },
    )
    rule = Rule(
        name="busy",
        condition="threshold",
        measurement="node",
        field="load1",
        comparison=">",
        threshold=32,
        for_seconds=120,
        clear_seconds=120,
    )
    result = backtest(rule, 1)
    assert result.error == ""
    assert result.events == 2 and result.by_kind == {"firing": 2, "resolved": 2}
    assert {n["object"] for n in result.shown} == {"oss01"}
    # A rule that must hold longer than the excursions never fires.
    rule.for_seconds = 900
    assert backtest(rule, 1).events == 0


def test_a_no_data_backtest_finds_the_gap(metrics):
    # Start just after a minute turns, so the minute still running holds no point yet: it is
    # not a gap.
    while not 1 <= time.time() % 60 < 8:
        time.sleep(0.5)
    now = int(time.time())
    write_load(now, {"oss01": [(7200, 4800, 4.0), (3600, 0, 4.0)], "oss02": [(7200, 0, 2.0)]})
    rule = Rule(name="silent", condition="no_data", measurement="node", field="load1")
    result = backtest(rule, 1)
    assert result.events == 1, result.notifications
    assert [n["object"] for n in result.shown] == ["oss01", "oss01"]  # firing, resolved


def test_a_health_backtest_reads_the_recorded_changes(db):
    now = timezone.now()
    for minutes, new, summary in [(90, "orange", {"volume_group": "degraded"}), (30, "green", {})]:
        StatusChange.objects.create(
            key="target:7",
            kind="target",
            name="scratch-OST0007",
            old="green" if new == "orange" else "orange",
            new=new,
            summary=summary,
            at=now - timedelta(minutes=minutes),
        )
    rule = Rule(name="vg", condition="health", health_state="volume_group", clear_seconds=60)
    result = backtest(rule, 1)
    assert result.by_kind == {"firing": 1, "resolved": 1}
    assert result.shown[0]["object"] == "scratch-OST0007"
