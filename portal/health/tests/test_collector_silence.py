"""Each measurement is called silent after its own collector's interval, not the sensor's: a BMC
and an array reported once a minute stay green through the minute and are called silent after
about two, on points in the sensors' schema in the real test InfluxDB. An array the array
collector reads names the collector, and the dashboard shows the collector's own rounds."""

from __future__ import annotations

import re
import time

import pytest

from portal.alerts import conditions
from portal.alerts.choices import ConditionKind
from portal.alerts.models import Rule
from portal.alerts.services.observation import HealthIndex, observe_rule
from portal.health.services.evaluation import evaluate, evaluate_and_store
from portal.health.tests.metrics import RackMetrics
from portal.inventory.models import StorageArray

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


def read_by_the_collector(settings, array: str = "ssu01-a") -> None:
    """``array`` given management addresses: the array collector on mgmt01 reads it, the
    other array stays with its servers' SMcli."""
    settings.OSTARA_ARRAYS_SERVER = "mgmt01"
    StorageArray.objects.filter(name=array).update(
        management_a="10.0.9.11", management_b="10.0.9.12"
    )


def test_an_array_the_array_collector_reads_names_the_collector_when_silent(
    rack_inventory, metrics_db, settings
):
    read_by_the_collector(settings)
    now = float(int(time.time()) // ROUND * ROUND)
    rack = RackMetrics(intervals={"bmc": 60.0, "array": 60.0}, collector="mgmt01")
    # The collector's one round 160 s ago (it stopped), and the servers' last SMcli read then.
    write_rounds(rack, now - 160, now, slow_every=3600)
    found = colours(now)
    status, reasons = found[("array", "ssu01-a")]
    assert status == "orange"
    assert (
        "its state is unknown: the array collector on mgmt01 has not reported it for 2 min "
        "(ostara-arrays): check the ostara-arrays service there" in reasons[0]
    ), reasons
    status, reasons = found[("array", "ssu01-b")]
    assert status == "orange"
    assert reasons == ["its state is unknown: no server's sensor has reported it for 2 min"]
    # The built-in "Sensor silent" alert holds for the array nobody else watches; for the one
    # read through SMcli, its servers' own silence is what is told.
    health = HealthIndex.of_trees(evaluate(now))
    silent_rule = Rule(condition=ConditionKind.HEALTH, health_state=conditions.SILENT)
    observed = {obs.label: obs for obs, kind in observe_rule(silent_rule, health, now)}
    assert observed["ssu01-a"].true and "array collector on mgmt01" in observed["ssu01-a"].summary
    assert not observed["ssu01-b"].true


def dashboard_line(client) -> tuple[str, str]:
    """The array collector's line on the dashboard, and its colour."""
    page = client.get("/").content.decode()
    found = re.search(r'id="array-collector" data-status="(\w+)">\s*(.*?)\s*</p>', page, re.S)
    assert found, "no array collector line on the dashboard"
    return found.group(2), found.group(1)


def says_ago(line: str, pattern: str, seconds: float, since: float) -> None:
    """``line`` is ``pattern`` (its "last round N s ago" as ``\\d+``), N at least ``seconds`` and
    no more than the time since ``since`` adds: the page says "ago" as of when it was drawn,
    on a busy machine seconds after the evaluation."""
    assert re.fullmatch(pattern, line), line
    ago = int(re.search(r"last round (\d+) s ago", line).group(1))
    assert seconds <= ago <= seconds + (time.time() - since) + 1, line


def test_the_dashboard_shows_the_array_collectors_rounds_and_when_it_is_late(
    client, world, rack_inventory, metrics_db, settings
):
    read_by_the_collector(settings)
    client.login(username="viewer", password="pw-viewer-123!")
    now = time.time()
    rack = RackMetrics(intervals={"bmc": 60.0, "array": 60.0}, collector="mgmt01")
    write_rounds(rack, now - 80, now - 20, slow_every=60)  # its last round 20 s ago
    evaluate_and_store(now=now)
    line, status = dashboard_line(client)
    says_ago(line, r"Array collector on mgmt01: last round \d+ s ago, every 60 s", 20, now)
    assert status == "green"
    # Its run of the arrays overdue: the line says so in orange, and the array it reads why.
    rack.collector_late = 35.0
    rack.not_due = set()
    rack.write(now - 10)
    evaluate_and_store(now=now)
    line, status = dashboard_line(client)
    assert status == "orange"
    says_ago(
        line,
        r"Array collector on mgmt01: last round \d+ s ago, every 60 s; late: its run of the "
        r"arrays is 35 s overdue \(its last run took 2 s\) \(ostara-arrays\)",
        10,
        now,
    )
    tree = client.get("/api/v1/health/").json()["filesystems"][0]
    assert tree["summary"]["array_collector"]["behind"] == [
        "its run of the arrays is 35 s overdue (its last run took 2 s)"
    ]
    arrays = {
        node["name"]: node
        for ssu in tree["children"]
        for node in ssu["children"]
        if node["kind"] == "array"
    }
    assert arrays["ssu01-a"]["status"] == "orange"
    assert arrays["ssu01-a"]["reasons"][0].startswith(
        "the array collector on mgmt01 is behind: its run of the arrays is 35 s overdue"
    )
    assert arrays["ssu01-b"]["status"] == "green"


def test_an_array_collector_silent_for_two_intervals_is_late_on_the_dashboard(
    client, world, rack_inventory, metrics_db, settings
):
    read_by_the_collector(settings)
    client.login(username="viewer", password="pw-viewer-123!")
    now = time.time()
    rack = RackMetrics(intervals={"bmc": 60.0, "array": 60.0}, collector="mgmt01")
    write_rounds(rack, now - 210, now - 150, slow_every=60)  # its last round 150 s ago
    rack.collector_silent = True
    write_rounds(rack, now - 140, now, slow_every=60)  # the servers go on
    evaluate_and_store(now=now)
    line, status = dashboard_line(client)
    assert status == "orange"
    says_ago(
        line,
        r"Array collector on mgmt01: last round \d+ s ago, every 60 s; late: no round for "
        r"2 min \(ostara-arrays\)",
        150,
        now,
    )
    page = client.get("/").content.decode()
    assert "ssu01-a: its state is unknown: the array collector on mgmt01 has not reported it" in (
        page
    )
