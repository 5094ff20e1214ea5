"""Acceptance on the virtual rack's own numbers, in-process and in seconds: its arrays' REST API
read by the sensors' array collector, its OSSs' files read by the sensors' Lustre collector,
one round each, written to the real test InfluxDB. `inject array-slow` on one volume group
makes the target page and the analytics report name that OST slow at the array (its OSS not
busy); a failed drive's MEL events show on the array's page and the page of the target on its
group, and in the alert mail about the array. (The collector as the management server runs
it is the provisioning's part; here each collector runs one round in the test.)"""

from __future__ import annotations

import copy
import json
import time

import pytest

from portal import influxdb as influx
from portal.alerts.choices import ConditionKind, Severity, TransitionKind
from portal.alerts.models import Delivery, Event, Rule, Transition
from portal.alerts.services.outbox import deliver_due
from portal.health.rules.nodes import Node
from portal.health.services.evaluation import evaluate
from portal.health.tests.conftest import load_spec
from portal.inventory.models import StorageArray
from provisioning.planner import make_plan
from sensors.collect import Collector
from sensors.config import SantricityArray, SensorConfig
from sensors.rounds import Round
from sensors.santricity import SantricityCollector
from simulator import failures, provision, scenarios
from simulator.rack import Rack
from simulator.santricity.server import ArraysApi

pytestmark = [pytest.mark.services, pytest.mark.django_db]
ARRAY = "ssu01-a"


def array_collector(root, spool) -> SantricityCollector:
    management = json.loads((root / "rack.json").read_text())["arrays"][ARRAY]["management"]
    controllers = tuple(
        (management["controllers"][c]["address"], management["controllers"][c]["port"])
        for c in "AB"
    )
    return SantricityCollector(
        SensorConfig(
            server="mgmt",
            spool_dir=str(spool),
            santricity_arrays=(
                SantricityArray(
                    ARRAY,
                    controllers,
                    tuple(management["controllers"][c]["sha256"] for c in "AB"),
                    user=management["user"],
                    password=(root / management["password_file"]).read_text().strip(),
                ),
            ),
        )
    )


def built_rack(root):
    """The MDS pair and the reference SSU of rack_inventory, built on the virtual rack."""
    with Rack.open(root, create=True) as rack:
        provision.build(rack, make_plan(copy.deepcopy(load_spec("mds_pair"))))
        provision.build(rack, make_plan(copy.deepcopy(load_spec("reference_ssu"))))
        rack.install_commands()
    return root


@pytest.fixture
def slow_group_and_failed_drive(rack_inventory, metrics_db, tmp_path):
    """The rack of rack_inventory under a workload; ssu01-a-vg03 slow at the array and a drive
    of ssu01-a-vg05 failed; 40 s of sensor rounds written."""
    root = built_rack(tmp_path / "rack")
    with Rack.open(root) as rack:
        scenarios.add_job(rack.state, stripe_count=-1, size=2**44, rate=6 * 2**30, fsname="scratch")
        rack.advance(by=10)
        rack.render()
    with Rack.open(root) as rack:  # after a first save, so the arrays log what changes
        failures.inject(rack, "array-slow", array=ARRAY, volume_group=f"{ARRAY}-vg03")
        failures.inject(rack, "drive-failed", array=ARRAY, volume_group=f"{ARRAY}-vg05")
    api = ArraysApi(root)
    api.start()
    try:
        arrays = array_collector(root, tmp_path / "spool")
        servers = {
            host: Collector(
                SensorConfig(
                    server=host,
                    root=str(root / "hosts" / host),
                    collectors=("ost", "node"),
                    spool_dir=str(tmp_path / host),
                )
            )
            for host in ("oss01", "oss02")
        }
        now = int(time.time())
        lines = []
        for tick in (now - 40, now - 30, now - 20, now - 10):
            with Rack.open(root) as rack:
                rack.advance(by=10)
                rack.render()
            for collector in servers.values():
                lines += collector.collect(tick * 1000).lines
            if tick == now - 20:  # the array collector's round (once a minute)
                rnd = Round(tick * 1000, {"server": "mgmt"})
                arrays.collect(rnd)
                lines += rnd.lines
        influx.write_lines(lines, precision="ms")
    finally:
        api.stop()


def test_the_rack_slow_group_is_slow_at_the_array_and_its_drive_events_show(
    slow_group_and_failed_drive, client, world, smtp
):
    client.force_login(world["viewer"])
    page = client.get("/health/targets/scratch-OST0003/").content.decode()
    assert 'data-verdict="slow_at_array"' in page
    assert "Slow at the array: volume scratch-OST0003 (ssu01-a-vg03) answers in" in page
    assert "the OSS oss02 is not busy" in page
    neighbour = client.get("/health/targets/scratch-OST0001/").content.decode()
    assert 'data-verdict="normal"' in neighbour
    report = client.get("/api/v1/analytics/report/?window=1h").json()
    assert [slow["target"] for slow in report["slow_at_array"]] == ["scratch-OST0003"]
    assert "oss02" not in report["overloaded"]

    array = client.get(f"/console/arrays/{ARRAY}/").content.decode()
    events = array.split('id="array-events"')[1]
    assert "Drive failed" in events and "Volume group degraded" in events
    assert "drive tray 0, drawer" in events
    degraded = client.get("/health/targets/scratch-OST0005/").content.decode()
    assert "Drive failed" in degraded.split('id="array-events"')[1]

    # The alert mail about the array lists them too.
    rule = Rule.objects.create(
        name="Array not optimal", severity=Severity.WARNING, condition=ConditionKind.HEALTH
    )
    event = Event.objects.create(
        rule=rule,
        severity=rule.severity,
        fingerprint=f"array:{ARRAY}",
        object_label=ARRAY,
        object_key=f"storagearray:{StorageArray.objects.get(name=ARRAY).pk}",
        summary=f"{ARRAY}: volume group {ARRAY}-vg05 is degraded",
    )
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    Delivery.objects.create(transition=transition, address="ops@example.org")
    assert len(deliver_due().sent) == 1
    mail = smtp.mailbox.messages[-1].get_body(preferencelist=("plain",)).get_content()
    assert "Recent array events" in mail
    assert f"critical  {ARRAY} drive tray 0, drawer" in mail and "Drive failed" in mail


def test_a_controller_whose_management_port_is_down_is_named_and_its_partner_answers(
    rack_inventory, metrics_db, tmp_path
):
    root = built_rack(tmp_path / "rack")
    with Rack.open(root) as rack:
        failures.inject(rack, "management-port-down", array=ARRAY, controller="A")
    api = ArraysApi(root)
    api.start()
    now = int(time.time())

    def collect_round(at: int) -> None:
        rnd = Round(at * 1000, {"server": "mgmt"})
        array_collector(root, tmp_path / "spool").collect(rnd)
        influx.write_lines(rnd.lines, precision="ms")

    def watched(at: int) -> Node:
        (tree,) = evaluate(float(at))
        return next(node for node, _ in tree.walk() if (node.kind, node.name) == ("array", ARRAY))

    try:
        # One round that A missed is a busy network, not a dead port: B answered, all is well.
        collect_round(now - 65)
        first = watched(now - 60)
        assert first.status == "green", first.reasons
        collect_round(now - 5)
    finally:
        api.stop()
    array = watched(now)
    assert array.status == "orange"
    assert array.reasons == [
        "controller A does not answer on its management address: the array is watched through "
        "controller B alone (check the controller's management port and its network)"
    ]
