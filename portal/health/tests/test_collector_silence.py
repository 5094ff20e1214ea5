"""Each measurement is called silent after its own collector's interval, not the sensor's: a BMC
and an array reported once a minute stay green through the minute and are called silent after
about two, on points in the sensors' schema in the real test InfluxDB."""

from __future__ import annotations

import time

import pytest

from portal.health.services.evaluation import evaluate
from portal.health.tests.metrics import RackMetrics

pytestmark = pytest.mark.services

ROUND = 10  # seconds between the sensors' rounds


def write_rounds(rack: RackMetrics, since: float, now: float, slow_every: int) -> None:
    """A sensor round every 10 s from ``since`` to ``now``, the BMC and the arrays only every
    ``slow_every`` seconds from ``since``, as sensors with those intervals write them."""
    moment = since
    while moment <= now:
        due = (moment - since) % slow_every == 0
        rack.not_due = set() if due else {"bmc", "array"}
        rack.write(moment)
        moment += ROUND


def colours(now: float) -> dict[tuple[str, str], tuple[str, list[str]]]:
    return {
        (node.kind, node.name): (node.status, node.reasons)
        for tree in evaluate(now)
        for node, _ in tree.walk()
    }


@pytest.mark.parametrize(
    ("intervals", "status"),
    [
        # The sensors say they run the BMC and the arrays once a minute.
        ({"bmc": 60.0, "array": 60.0}, "green"),
        # No interval said: the collectors' defaults, once a minute.
        ({}, "green"),
        # They say every 10 s: 50 s without a reading is a silence.
        ({"bmc": 10.0, "array": 10.0}, "orange"),
    ],
)
def test_a_bmc_and_an_array_read_once_a_minute_stay_green_through_the_minute(
    rack_inventory, metrics_db, intervals, status
):
    now = float(int(time.time()) // ROUND * ROUND)
    # The last BMC and array reports 50 s ago: the next is due in 10 s.
    rack = RackMetrics(intervals=intervals)
    write_rounds(rack, now - 110, now, slow_every=60)
    found = colours(now)
    assert found[("server", "oss01")][0] == status, found[("server", "oss01")]
    assert found[("array", "ssu01-a")][0] == status, found[("array", "ssu01-a")]
    if status == "green":
        assert found[("filesystem", "scratch")][0] == "green", found[("filesystem", "scratch")]


def test_a_bmc_and_an_array_read_once_a_minute_are_silent_after_two_and_a_half(
    rack_inventory, metrics_db
):
    now = float(int(time.time()) // ROUND * ROUND)
    rack = RackMetrics(intervals={"bmc": 60.0, "array": 60.0})
    # One report 160 s ago, then none: two missed, the third late.
    write_rounds(rack, now - 160, now, slow_every=3600)
    found = colours(now)
    server_status, server_reasons = found[("server", "oss01")]
    assert server_status == "orange"
    assert any("its BMC has not answered for 100 s" in r for r in server_reasons), server_reasons
    array_status, array_reasons = found[("array", "ssu01-a")]
    assert array_status == "orange"
    assert any("no server's sensor has reported it for 2 min" in r for r in array_reasons), (
        array_reasons
    )
