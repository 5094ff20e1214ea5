"""A sensor round that lands in InfluxDB while the health engine reads it: on a busy appliance the
engine's requests answer seconds apart, and the array collector writes whenever its round ends.
A failed drive's group stays degraded (its OST orange, its alerts firing) whichever answers the
new round is in: the arrays' rounds are read first, and of the arrays whose round counts a group
not ok the groups' faults after, a round that landed between them included. Points in the
sensors' schema in the real test InfluxDB."""

from __future__ import annotations

import threading
import time

import pytest

from portal import influxdb as influx
from portal.health.services import metrics as health_metrics
from portal.health.services.evaluation import evaluate
from portal.health.tests.metrics import RackMetrics
from portal.health.tests.test_health_api_sequence import group_drives
from portal.inventory.models import Target

pytestmark = pytest.mark.services

FAULTS = "component = 'volume_group'"
ROUNDS = "component = 'controller'"


def test_a_round_landing_mid_read_leaves_a_degraded_group_degraded(
    rack_inventory, metrics_db, monkeypatch
):
    now = float(int(time.time()))
    rack = RackMetrics(failed_drives=set(group_drives("ssu01-a-vg00")[:1]))
    rack.write(now - 10)
    next_round = rack.lines(now)  # the drive still failed (the inventory is read here)
    landed = threading.Event()
    faults_read_after = threading.Event()
    read = influx.query_tagged

    def as_on_a_busy_appliance(statements, epoch="ms"):
        """The next round lands right after the request that reads the arrays' rounds, before
        the one that reads their groups' faults."""
        if any(FAULTS in s for s in statements) and landed.is_set():
            faults_read_after.set()
        answer = read(statements, epoch)
        if any(ROUNDS in s for s in statements) and not landed.is_set():
            influx.write_lines(next_round, precision="ms")
            landed.set()
        return answer

    monkeypatch.setattr(influx, "query_tagged", as_on_a_busy_appliance)
    health_metrics.KEPT.clear()
    colours = {
        (node.kind, node.name): (node.status, node.reasons)
        for tree in evaluate(now + 1)
        for node, _ in tree.walk()
    }
    assert landed.is_set() and faults_read_after.is_set()
    status, reasons = colours[("target", "scratch-OST0000")]
    assert status == "orange", reasons
    assert any("ssu01-a-vg00 is degraded" in reason for reason in reasons), reasons


def colours_at(moment: float) -> dict:
    health_metrics.KEPT.clear()
    return {
        (node.kind, node.name): (node.status, node.reasons)
        for tree in evaluate(moment)
        for node, _ in tree.walk()
    }


def test_a_round_read_between_its_batches_unmounts_no_target(rack_inventory, metrics_db):
    """A sensor's round goes out in batches, its `sensor` point last: read after its first
    batch, the OSTs of the later ones have only the last round's points. They stay mounted
    (no CRITICAL mail for half an OSS); once the round has landed whole, an OST it left out is
    unmounted."""
    now = float(int(time.time()))
    rack = RackMetrics()
    rack.write(now - 10)
    labels = [
        t.label
        for t in Target.objects.filter(primary_server__hostname="oss01", kind="OST").order_by(
            "index"
        )
    ]
    assert len(labels) > 2
    first, later, left_out = labels[0], labels[1:-1], labels[-1]
    lines = rack.lines(now)
    oss01 = [line for line in lines if ",server=oss01" in line and not line.startswith("sensor,")]
    batch = [
        line for line in oss01 if not any(f"target={t.split('-')[-1]}," in line for t in labels[1:])
    ]
    rest = [line for line in lines if line not in batch]
    influx.write_lines(batch, precision="ms")

    colours = colours_at(now + 1)
    for label in (first, *later, left_out):
        assert colours[("target", label)][0] == "green", (label, colours[("target", label)])

    influx.write_lines(
        [line for line in rest if f"target={left_out.split('-')[-1]}," not in line],
        precision="ms",
    )
    colours = colours_at(now + 2)
    status, reasons = colours[("target", left_out)]
    assert status == "red" and reasons == ["not mounted on any server"], (status, reasons)
    for label in (first, *later):
        assert colours[("target", label)][0] == "green", (label, colours[("target", label)])


def test_a_round_that_lands_after_the_others_next_one_is_read(rack_inventory, metrics_db):
    """A round asks for the targets' points only since their servers' last whole rounds, not
    since a fixed margin. A busy OSS's round lands after the other servers' next round, stamped
    before it: it is read, and the OST it reports 97 % full turns red. Whichever way the round
    is bounded, the points of a steady round are asked only since that round's predecessor."""
    now = float(int(time.time()))
    rack = RackMetrics()
    rack.write(now - 20)
    health_metrics.KEPT.clear()
    evaluate(now - 19)
    evaluate(now - 19)  # this round knows every server's last round

    busy = Target.objects.filter(primary_server__hostname="oss02", kind="OST").first().label
    rack.fill_percent[busy] = 97.0
    lines = rack.lines(now - 10)
    late = [line for line in lines if ",server=oss02" in line]
    influx.write_lines([line for line in lines if line not in late], precision="ms")
    asked = []
    read = influx.query_tagged_at_once

    def noted(batches, epoch="ms"):
        asked.extend(statement for batch in batches for statement in batch)
        return read(batches, epoch)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(influx, "query_tagged_at_once", noted)
        colours = {(n.kind, n.name): n.status for t in evaluate(now - 9) for n, _ in t.walk()}
    assert colours[("target", busy)] == "green"
    (targets,) = [s for s in asked if s.startswith("SELECT fs, target, server") and "ost" in s]
    assert f"time > {int((now - 20) * 1000) - 1}ms" in targets, targets  # that round once more

    influx.write_lines(late, precision="ms")
    trees = evaluate(now - 8)
    (node,) = [n for tree in trees for n, _ in tree.walk() if (n.kind, n.name) == ("target", busy)]
    assert node.status == "red", (node.status, node.reasons)
    assert any("97.0 % full" in reason for reason in node.reasons), node.reasons


def test_targets_coming_back_late_on_a_server_that_had_none_are_read(rack_inventory, metrics_db):
    """A server whose sensor reports but whose targets are elsewhere (failed over, being
    restarted) mounts them again, and its round lands after the other servers' next one: its
    targets are read, though the targets' points had none of its before."""
    now = float(int(time.time()))
    rack = RackMetrics()
    mine = [t.label for t in Target.objects.filter(primary_server__hostname="oss02", kind="OST")]

    def without_targets(lines: list[str]) -> list[str]:
        return [line for line in lines if not (line.startswith("ost,") and ",server=oss02" in line)]

    influx.write_lines(without_targets(rack.lines(now - 30)), precision="ms")
    health_metrics.KEPT.clear()
    evaluate(now - 29)
    evaluate(now - 29)
    lines = rack.lines(now - 20)
    late = [line for line in lines if ",server=oss02" in line]
    influx.write_lines([line for line in lines if line not in late], precision="ms")
    evaluate(now - 19)
    others = [line for line in rack.lines(now - 10) if ",server=oss02" not in line]
    influx.write_lines(others, precision="ms")  # the others' next round, before oss02's
    colours = {(n.kind, n.name): n.status for t in evaluate(now - 9) for n, _ in t.walk()}
    assert {colours[("target", label)] for label in mine} == {"red"}  # mounted nowhere yet

    influx.write_lines(late, precision="ms")  # oss02's round of now - 20, with its targets
    colours = {(n.kind, n.name): n.status for t in evaluate(now - 8) for n, _ in t.walk()}
    assert {colours[("target", label)] for label in mine} == {"green"}, mine


def test_an_array_round_sent_after_its_sensor_point_is_read(rack_inventory, metrics_db):
    """An outside program's run (SMcli, the REST collector) that ends in the next round is sent
    with that one, under the time of the round it started in: after that round's `sensor`
    point. The arrays are still read since a margin, not since the servers' last whole rounds:
    a drive failed in such a late run degrades its group."""
    now = float(int(time.time()))
    rack = RackMetrics()
    rack.write(now - 20)
    health_metrics.KEPT.clear()
    evaluate(now - 19)
    evaluate(now - 19)

    rack.failed_drives = set(group_drives("ssu01-a-vg00")[:1])
    lines = rack.lines(now - 10)
    arrays = [line for line in lines if line.startswith("array,")]
    influx.write_lines([line for line in lines if line not in arrays], precision="ms")
    colours = {(n.kind, n.name): n.status for t in evaluate(now - 9) for n, _ in t.walk()}
    assert colours[("target", "scratch-OST0000")] == "green"

    influx.write_lines(arrays, precision="ms")  # the run that started at now - 10 ends
    trees = evaluate(now - 8)
    (node,) = [
        n
        for tree in trees
        for n, _ in tree.walk()
        if (n.kind, n.name) == ("target", "scratch-OST0000")
    ]
    assert node.status == "orange", (node.status, node.reasons)
    assert any("ssu01-a-vg00 is degraded" in reason for reason in node.reasons), node.reasons
