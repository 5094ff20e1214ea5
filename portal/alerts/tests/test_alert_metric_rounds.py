"""Live rounds of metric rules against the test InfluxDB: rules that share a field read it
together, and a rule InfluxDB cannot answer does not stop the others."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from portal import influxdb as influx
from portal.alerts.choices import EventStatus
from portal.alerts.models import Event, Rule

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture
def metrics(metrics_db):
    Rule.objects.all().delete()  # only the rules of each test


def write_fill(now: int, avail_percent: dict[str, float]) -> None:
    lines = []
    for t in range(now - 120, now + 1, 10):
        for ost, percent in avail_percent.items():
            lines.append(
                f"ost,fs=scratch,target={ost},server=oss01 "
                f"kbytes_avail={int(percent * 1000)}i,kbytes_total=100000i {t}"
            )
    influx.write_lines(lines)


def fill_rule(name: str, below: float, **fields) -> Rule:
    values = {
        "condition": "threshold",
        "measurement": "ost",
        "field": "kbytes_avail",
        "percent_of": "kbytes_total",
        "comparison": "<",
        "threshold": below,
        "for_seconds": 0,
        "extra_addresses": "ops@example.org",
    }
    return Rule.objects.create(name=name, **{**values, **fields})


def firing(rule: Rule) -> set[str]:
    return set(
        Event.objects.filter(rule=rule, status=EventStatus.FIRING).values_list(
            "object_label", flat=True
        )
    )


def test_warning_and_critical_levels_of_one_field_each_see_their_targets(metrics):
    from portal.alerts.services.evaluation import evaluate_round

    now = int(time.time())
    write_fill(now, {"OST0000": 4.0, "OST0001": 15.0, "OST0002": 60.0})
    critical = fill_rule("OST nearly full", 5, severity="critical")
    warning = fill_rule("OST filling", 20)
    result = evaluate_round(timezone.now())
    assert result.observations == 6  # three targets, two rules
    assert firing(critical) == {"scratch-OST0000 on oss01"}
    assert firing(warning) == {"scratch-OST0000 on oss01", "scratch-OST0001 on oss01"}
    summary = Event.objects.get(rule=critical).summary
    assert "scratch-OST0000" in summary and "4" in summary


def test_a_rule_influxdb_cannot_answer_leaves_the_others_evaluated(metrics, caplog):
    from portal.alerts.services.evaluation import evaluate_round

    now = int(time.time())
    write_fill(now, {"OST0000": 4.0})
    # load1 stored as text (a broken collector): InfluxDB refuses a derivative of it.
    influx.write_lines([f'node,server=oss01,role=oss load1="high" {now - s}' for s in (0, 10)])
    broken = Rule.objects.create(
        name="load rising",
        condition="threshold",
        measurement="node",
        field="load1",
        rate=True,
        comparison=">",
        threshold=1,
        for_seconds=0,
    )
    full = fill_rule("OST nearly full", 5)
    with caplog.at_level(logging.WARNING, logger="portal.alerts.services.evaluation"):
        evaluate_round(timezone.now() + timedelta(seconds=1))
    assert firing(full) == {"scratch-OST0000 on oss01"}
    assert not Event.objects.filter(rule=broken).exists()
    assert "load rising not evaluated" in caplog.text


def test_the_colours_health_hands_over_are_the_rows_it_stored(rack_inventory, metrics_db):
    """The alert round after an evaluation reads no status row back: what health hands over
    (its trees) is, object for object, what it stored, with the same ancestry."""
    from portal.alerts.services.observation import HealthIndex
    from portal.health.services.evaluation import evaluate_and_store
    from portal.health.tests.metrics import RackMetrics

    rack = RackMetrics()
    now = time.time()
    rack.write(now - 20)
    rack.write(now - 10)
    handed = HealthIndex.of_trees(evaluate_and_store(now=now - 10).trees)
    stored = HealthIndex.load()
    assert len(handed.rows) > 30 and handed.by_key == stored.by_key
    assert [row.key for row in handed.rows] == [row.key for row in stored.rows]
    assert all(handed.ancestry(key) == stored.ancestry(key) for key in stored.by_key)
