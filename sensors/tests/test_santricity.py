"""The arrays through their controllers' SANtricity REST API (sensors.santricity), against a
small HTTPS server on loopback serving the API's bodies (sensors/tests/santricity_api.py)."""

from __future__ import annotations

import copy
import time

import pytest

from sensors import rounds
from sensors.arrays import collect_arrays, components_from_smcli
from sensors.collect import Collector
from sensors.config import SantricityArray, SensorConfig
from sensors.rounds import Round
from sensors.santricity import EVENTS_FILE, SantricityCollector
from sensors.tests.lp import collect_root, one, parse_lines, points_of
from sensors.tests.santricity_api import (
    PASSWORD,
    USER,
    Controller,
    Silent,
    closed_port,
    fixture,
    make_certificate,
)

TS = 1_795_732_860_000

# The fixtures' state as SMcli prints it (the virtual rack's SMcli; sensors.arrays reads it).
SMCLI_SAME_STATE = """\
DRIVES------------------------------
   TRAY, DRAWER, SLOT  STATUS     CAPACITY        ROLE           VOLUME GROUP
   0, 1, 1             Replaced   4,000.000 GB    Assigned           ssu01-a-vg00
   0, 1, 2             Optimal    4,000.000 GB    Assigned           ssu01-a-vg00
   0, 1, 3             Failed     4,000.000 GB    Assigned           ssu01-a-vg00
   0, 1, 4             Optimal    4,000.000 GB    Assigned           ssu01-a-vg00
   0, 2, 1             Optimal    4,000.000 GB    Hot spare (in use) ssu01-a-vg00
   0, 2, 2             Optimal    4,000.000 GB    Assigned           ssu01-a-vg01
   0, 2, 3             Optimal    4,000.000 GB    Assigned           ssu01-a-vg01
   0, 2, 6             Optimal    4,000.000 GB    Hot spare
   0, 2, 7             Optimal    4,000.000 GB    Unassigned
   0, 3, 1             Missing    4,000.000 GB    Assigned           ssu01-a-vg01
   0, 3, 2             Missing    4,000.000 GB    Assigned           ssu01-a-vg01
VOLUME GROUP ssu01-a-vg00
   Status:              Critical
   Operation:           Reconstruction (42% complete)
   RAID level:          6

VOLUME GROUP ssu01-a-vg01
   Status:              Degraded
   RAID level:          6

Controller in Tray 0, Slot A
   Status:              Online
Controller in Tray 0, Slot B
   Status:              Failed
"""


@pytest.fixture(autouse=True)
def every_problem_logged():
    """A problem is logged once per 10 minutes per source: each test sees its own."""
    rounds._last_logged.clear()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def controllers(certificate):
    """Controllers A and B of array ssu01-a, both answering."""
    cert, key, _ = certificate
    started = [Controller(cert, key), Controller(cert, key)]
    yield started
    for controller in started:
        controller.close()


# An array's whole timeout in the tests of hung and silent controllers: each of its two
# controllers has half of it, and B's TLS handshake and GETs must fit in that half on a
# machine running the whole suite (with 1 s, B's half was too short there once).
TIMEOUT = 6.0


def config_for(tmp_path, arrays, timeout: float = 5.0) -> SensorConfig:
    return SensorConfig(
        server="mgmt01",
        spool_dir=str(tmp_path / "spool"),
        santricity_arrays=tuple(arrays),
        santricity_timeout=timeout,
    )


def pinned(name: str, addresses, *fingerprints: str, password: str = PASSWORD) -> SantricityArray:
    """An array whose controllers are pinned to `fingerprints` in order (one given: every
    controller serves that certificate)."""
    if len(fingerprints) == 1:
        fingerprints *= len(addresses)
    return SantricityArray(name, tuple(addresses), fingerprints, user=USER, password=password)


def run_round(collector: SantricityCollector, timestamp: int = TS):
    rnd = Round(timestamp, {"server": "mgmt01"})
    collector.collect(rnd)
    return rnd, parse_lines(rnd.lines)


def as_set(points):
    return {
        (p.measurement, tuple(sorted(p.tags.items())), tuple(sorted(p.fields.items())))
        for p in points
    }


def test_the_rest_api_gives_the_array_points_smcli_gives_for_the_same_state(
    tmp_path, certificate, controllers
):
    a, b = controllers
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    assert rnd.errors == 0

    smcli = Round(TS, {"server": "mgmt01"})
    found = components_from_smcli("ssu01-a", SMCLI_SAME_STATE)
    collect_arrays(smcli, type("S", (), {"components": lambda self: found})(), "smcli")
    assert as_set(points_of(points, "array")) == as_set(parse_lines(smcli.lines))
    # What the health engine reads in them: the critical group under reconstruction, the
    # replaced, failed and missing drives, the spare fine, controller B failed.
    group = one(points, "array", component="volume_group", id="ssu01-a-vg00")
    assert group.fields == {
        "state": "critical",
        "ok": 0,
        "operation": "reconstruction",
        "progress": 42,
    }
    assert one(points, "array", id="0,3,1").fields == {"state": "missing", "ok": 0}
    assert one(points, "array", id="0,2,6").fields == {"state": "optimal", "ok": 1}
    assert one(points, "array", component="controller", id="B").fields == {
        "state": "failed",
        "ok": 0,
        "groups_not_ok": 2,  # vg00 critical, vg01 degraded
    }
    # Only A was asked, and it is named as the one that answered.
    assert one(points, "array_management", controller="A").fields["answered"] == 1
    assert points_of(points, "array_management", controller="B") == []
    assert b.seen == []


def test_the_performance_figures_in_their_units(tmp_path, certificate, controllers):
    a, b = controllers
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    _, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    volume = one(points, "array_volume", volume="ssu01-a-ost0001")
    assert volume.tags["volume_group"] == "ssu01-a-vg01" and volume.tags["array"] == "ssu01-a"
    # IOPS, MB/s and ms as the array gives them (analysed-volume-statistics).
    assert volume.fields == {
        "read_iops": 100.0,
        "write_iops": 50.0,
        "read_mbps": 100.0,
        "write_mbps": 50.0,
        "read_latency_ms": 38.5,
        "write_latency_ms": 41.0,
    }
    # The drive by Ostara's tray,drawer,slot id (diskId -> the drive's drawer and position).
    spare = one(points, "array_drive", id="0,2,1")
    assert spare.fields["write_iops"] == 310.5 and spare.fields["write_latency_ms"] == 7.25
    controller = one(points, "array_controller", controller="A")
    assert controller.fields["cpu_percent"] == 23.5
    assert controller.fields["cache_hit_percent"] == 17.25
    assert controller.fields["read_mbps"] == 912.5
    port = one(points, "array_interface", controller="A", interface="A-2")
    assert port.fields == {
        "read_iops": 456.25,
        "write_iops": 345.0,
        "read_mbps": 456.25,
        "write_mbps": 345.0,
        "queue_depth": 3.0,
    }


def test_controller_a_not_answering_asks_b_and_names_a(tmp_path, certificate, controllers):
    _, b = controllers
    array = pinned("ssu01-a", [closed_port(), b.address], certificate[2])
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    assert rnd.errors == 0  # the array was watched: B answered
    assert one(points, "array_management", controller="A").fields["answered"] == 0
    assert one(points, "array_management", controller="B").fields["answered"] == 1
    assert len(points_of(points, "array", component="drive")) == 11


def test_a_controller_answering_5xx_is_left_for_its_partner(tmp_path, certificate, controllers):
    a, b = controllers
    a.status = 503
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    assert rnd.errors == 0
    assert one(points, "array_management", controller="A").fields["answered"] == 0
    assert one(points, "array_management", controller="B").fields["answered"] == 1
    assert points_of(points, "array_volume")


def test_both_controllers_silent_costs_one_timeout_not_the_round(
    tmp_path, certificate, controllers, caplog
):
    a, _ = controllers
    hung_a, hung_b = Silent(), Silent()
    try:
        dead = pinned("ssu02-a", [hung_a.address, hung_b.address], certificate[2])
        alive = pinned("ssu01-a", [a.address], certificate[2])
        collector = SantricityCollector(config_for(tmp_path, [dead, alive], timeout=TIMEOUT))
        started = time.monotonic()
        rnd, points = run_round(collector)
        took = time.monotonic() - started
    finally:
        hung_a.close()
        hung_b.close()
    assert took < TIMEOUT + 1.5, f"the round took {took:.1f} s with a {TIMEOUT:g} s timeout"
    assert rnd.errors == 1
    assert "ssu02-a" in caplog.text and "no controller answered" in caplog.text
    assert [
        p.fields["answered"] for p in points_of(points, "array_management", array="ssu02-a")
    ] == [0, 0]
    # The other array of the round was collected all the same.
    assert points_of(points, "array", array="ssu01-a")


def test_a_hung_controller_a_leaves_b_its_share_of_the_timeout(tmp_path, certificate, controllers):
    _, b = controllers
    hung = Silent()
    try:
        array = pinned("ssu01-a", [hung.address, b.address], certificate[2])
        started = time.monotonic()
        rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array], timeout=TIMEOUT)))
        took = time.monotonic() - started
    finally:
        hung.close()
    assert rnd.errors == 0 and took < TIMEOUT + 1.5
    assert one(points, "array_management", controller="A").fields["answered"] == 0
    assert one(points, "array_management", controller="B").fields["answered"] == 1
    assert points_of(points, "array", component="volume_group")


def test_a_controller_hung_after_its_handshake_leaves_b_its_share_of_the_timeout(
    tmp_path, certificate, controllers
):
    a, b = controllers
    a.hang = TIMEOUT + 2  # answers nothing for longer than the array's whole timeout
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    started = time.monotonic()
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array], timeout=TIMEOUT)))
    assert rnd.errors == 0 and time.monotonic() - started < TIMEOUT + 1.5
    assert one(points, "array_management", controller="A").fields["answered"] == 0
    assert one(points, "array_management", controller="B").fields["answered"] == 1
    assert points_of(points, "array", component="volume_group")


def test_a_controller_closing_each_connection_is_connected_to_again_and_checked_again(
    tmp_path, certificate, controllers
):
    a, b = controllers
    a.close_each = True
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    assert rnd.errors == 0
    assert one(points, "array_management", controller="A").fields["answered"] == 1
    assert points_of(points, "array", component="volume_group") and b.seen == []
    assert len(a.seen) > 3  # every document, each on a connection of its own


def test_an_event_log_or_statistics_that_fail_cost_only_themselves_not_the_state(
    tmp_path, certificate, controllers, caplog
):
    a, b = controllers
    for path in list(a.routes):
        if "statistics" in path:
            del a.routes[path]  # an older firmware: 404
    a.events = None  # the event log fails (the server answers 500)
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    collector = SantricityCollector(config_for(tmp_path, [array]))
    rnd, points = run_round(collector)
    assert points_of(points, "array", component="volume_group") and b.seen == []
    assert points_of(points, "array_volume") == [] and points_of(points, "array_event") == []
    # Each document that failed is a problem of the round (the log says the first of them).
    assert rnd.errors == 5 and "analysed-volume-statistics: HTTP 404" in caplog.text
    # The events are asked for again, from the start, once the log answers.
    a.events = copy.deepcopy(fixture("mel-events"))
    _, points = run_round(collector)
    assert points_of(points, "array_event")


def test_a_wrong_monitor_password_is_said_and_not_tried_on_b(
    tmp_path, certificate, controllers, caplog
):
    a, b = controllers
    array = pinned("ssu01-a", [a.address, b.address], certificate[2], password="not-the-password")
    config = config_for(tmp_path, [array])
    rnd, points = run_round(SantricityCollector(config))
    assert rnd.errors == 1
    assert "refused the monitor account (HTTP 401)" in caplog.text and "ssu01-a" in caplog.text
    assert b.seen == [] and points_of(points, "array") == []
    # The health engine is told what was refused, not that the controller is silent.
    assert one(points, "array_management", controller="A").fields["refused"] == "account"


def test_a_wrong_pinned_fingerprint_is_refused_before_the_password_is_sent(
    tmp_path, certificate, controllers, caplog
):
    a, b = controllers
    wrong = "ab" * 32
    array = pinned("ssu01-a", [a.address, b.address], wrong)
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    assert a.seen == [] and b.seen == []  # no request, so no Authorization header, was sent
    assert rnd.errors >= 1
    assert "ssu01-a" in caplog.text and wrong in caplog.text and certificate[2] in caplog.text
    assert points_of(points, "array") == []
    assert [p.fields["answered"] for p in points_of(points, "array_management")] == [0, 0]
    assert {p.fields["refused"] for p in points_of(points, "array_management")} == {"certificate"}


def test_each_controller_is_checked_against_its_own_pin_only(
    tmp_path, certificate, controllers, caplog
):
    """Controller A presenting controller B's certificate is refused (B's pin is not A's); the
    array is still read through B, which presents its own."""
    a_cert, a_key, a_fingerprint = certificate
    b_cert, b_key, b_fingerprint = make_certificate(tmp_path, "controller-b")
    impostor, b = Controller(b_cert, b_key), Controller(b_cert, b_key)
    try:
        array = pinned("ssu01-a", [impostor.address, b.address], a_fingerprint, b_fingerprint)
        rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    finally:
        impostor.close()
        b.close()
    assert impostor.seen == []  # no request, so no Authorization header, was sent to it
    assert "controller A" in caplog.text and b_fingerprint in caplog.text
    assert f"not controller A's pinned {a_fingerprint}" in caplog.text
    assert rnd.errors == 1  # the refused certificate is said; the array was read
    management = {p.tags["controller"]: p.fields for p in points_of(points, "array_management")}
    assert (management["A"]["answered"], management["A"]["refused"]) == (0, "certificate")
    assert management["B"]["answered"] == 1 and b.seen
    assert points_of(points, "array", component="volume_group")

    # The same two certificates the right way round: A's pin fits A, B is not asked.
    a = Controller(a_cert, a_key)
    try:
        array = pinned("ssu01-a", [a.address, closed_port()], a_fingerprint, b_fingerprint)
        rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    finally:
        a.close()
    assert rnd.errors == 0
    assert one(points, "array_management", controller="A").fields["answered"] == 1
    assert points_of(points, "array", component="volume_group")


def test_a_controller_not_pinned_yet_is_never_asked(tmp_path, certificate, controllers, caplog):
    a, b = controllers
    a.status = 503
    array = pinned("ssu01-a", [a.address, b.address], certificate[2], "")
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    assert b.seen == [] and rnd.errors == 1
    assert "controller B: its certificate is not pinned yet" in caplog.text
    assert points_of(points, "array_management", controller="B") == []


def test_two_arrays_with_different_monitor_passwords_are_both_read(tmp_path, certificate):
    cert, key, fingerprint = certificate
    first, second = Controller(cert, key, "first-pass"), Controller(cert, key, "second-pass")
    try:
        arrays = [
            pinned("ssu01-a", [first.address], fingerprint, password="first-pass"),
            pinned("ssu02-a", [second.address], fingerprint, password="second-pass"),
        ]
        rnd, points = run_round(SantricityCollector(config_for(tmp_path, arrays)))
        assert rnd.errors == 0
        assert points_of(points, "array", array="ssu01-a")
        assert points_of(points, "array", array="ssu02-a")
        # Each was sent its own password only.
        assert {h["Authorization"] for _, h in first.seen} == {first.authorization}
        assert {h["Authorization"] for _, h in second.seen} == {second.authorization}
    finally:
        first.close()
        second.close()


def test_a_site_ca_file_verifies_the_controllers(tmp_path, certificate, controllers, caplog):
    cert, _, _ = certificate
    a, _ = controllers
    account = {"user": USER, "password": PASSWORD}
    trusted = SantricityArray("ssu01-a", (a.address,), ca_file=str(cert), **account)
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [trusted])))
    assert rnd.errors == 0 and points_of(points, "array")
    assert all(headers.get("Authorization") for _, headers in a.seen)

    # Another CA: the controller's certificate is not trusted, nothing is sent to it.
    other, _, _ = make_certificate(tmp_path, "other-ca")
    a.seen.clear()
    rounds._last_logged.clear()
    untrusted = SantricityArray("ssu01-a", (a.address,), ca_file=str(other), **account)
    rnd, points = run_round(SantricityCollector(config_for(tmp_path, [untrusted])))
    assert rnd.errors == 1 and "certificate verify failed" in caplog.text
    assert a.seen == [] and points_of(points, "array") == []

    # The right CA, but the address is not the one the certificate is for.
    caplog.clear()
    rounds._last_logged.clear()
    by_name = SantricityArray("ssu01-a", (("localhost", a.port),), ca_file=str(cert), **account)
    rnd, _ = run_round(SantricityCollector(config_for(tmp_path, [by_name])))
    assert rnd.errors == 1 and "localhost" in caplog.text
    assert a.seen == []


def test_mel_events_after_the_last_seen_only_and_none_doubled_or_lost_over_a_restart(
    tmp_path, certificate, controllers
):
    a, b = controllers
    a.events = []
    for sequence in range(1, 151):
        a.log(sequence, f"event {sequence}")
    array = pinned("ssu01-a", [a.address], certificate[2])
    config = config_for(tmp_path, [array])

    # The first run takes the newest 100 only.
    _, points = run_round(SantricityCollector(config))
    first = sorted(p.fields["sequence"] for p in points_of(points, "array_event"))
    assert first == list(range(51, 151))
    (event,) = [p for p in points_of(points, "array_event") if p.fields["sequence"] == 150]
    assert event.tags == {
        "server": "mgmt01",
        "array": "ssu01-a",
        "component": "drive",
        "id": "0,1,2",
        "priority": "critical",
        "event_type": "0x226C",
    }
    assert event.fields["description"] == "event 150"
    assert event.timestamp == (1795733000 + 150) * 1000 + 150  # the event's time, not the round's

    # Later rounds ask from the last one seen, which the log still holds (a log without it
    # started again: test_santricity_mel_reset.py), and write only those after it.
    collector = SantricityCollector(config)
    a.log(151)
    a.log(152)
    _, points = run_round(collector, TS + 60_000)
    assert sorted(p.fields["sequence"] for p in points_of(points, "array_event")) == [151, 152]
    assert any("startSequenceNumber=150&" in path for path, _ in a.seen)

    # A restart: the last sequence is read back from the spool directory.
    assert (tmp_path / "spool" / EVENTS_FILE).exists()
    a.log(153)
    _, points = run_round(SantricityCollector(config), TS + 120_000)
    assert [p.fields["sequence"] for p in points_of(points, "array_event")] == [153]
    _, points = run_round(SantricityCollector(config), TS + 180_000)
    assert points_of(points, "array_event") == []
    # An array whose log was empty when first asked: all of its events are new afterwards.
    b.events = []
    empty = pinned("ssu01-b", [b.address], certificate[2])
    run_round(SantricityCollector(config_for(tmp_path, [empty])))
    for sequence in range(1, 121):
        b.log(sequence)
    _, points = run_round(SantricityCollector(config_for(tmp_path, [empty])), TS + 60_000)
    assert len(points_of(points, "array_event", array="ssu01-b")) == 120

    # Even an answer that repeats old entries writes none of them twice.
    a.whole_log = True
    a.log(154)
    _, points = run_round(SantricityCollector(config), TS + 240_000)
    assert [p.fields["sequence"] for p in points_of(points, "array_event")] == [154]


def test_mel_events_name_their_drive_group_and_controller(tmp_path, certificate, controllers):
    a, _ = controllers
    array = pinned("ssu01-a", [a.address], certificate[2])
    _, points = run_round(SantricityCollector(config_for(tmp_path, [array])))
    named = {
        p.fields["sequence"]: (p.tags["component"], p.tags.get("id", ""), p.tags["priority"])
        for p in points_of(points, "array_event")
    }
    assert named == {
        41: ("drive", "0,1,3", "critical"),
        42: ("drive", "0,2,1", "critical"),
        43: ("volume_group", "ssu01-a-vg00", "informational"),
        44: ("controller", "B", "critical"),
        45: ("array", "", "critical"),
    }


def test_the_sensor_round_runs_the_santricity_collector(tmp_path, certificate, controllers):
    a, b = controllers
    array = pinned("ssu01-a", [a.address, b.address], certificate[2])
    rnd, points = collect_root(
        tmp_path / "empty",
        TS,
        collectors=("santricity",),
        spool_dir=str(tmp_path / "spool"),
        santricity_arrays=(array,),
    )
    assert rnd.errors == 0
    assert one(points, "array", component="controller", id="A").tags["ssu"] == "ssu01"
    assert points_of(points, "array_volume")


def test_the_arrays_are_asked_once_per_santricity_interval_not_every_round(
    tmp_path, certificate, controllers
):
    a, _ = controllers
    array = pinned("ssu01-a", [a.address], certificate[2])
    config = config_for(tmp_path, [array])  # [santricity] interval: 60 s by default
    config.collectors = ("santricity",)
    collector = Collector(config)
    asked = []
    for seconds in range(0, 130, 10):  # sensor rounds every 10 s
        points = parse_lines(collector.collect(TS + seconds * 1000).lines)
        if points_of(points, "array_management"):
            asked.append(seconds)
    collector.close()
    assert asked == [0, 60, 120]
