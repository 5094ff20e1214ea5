"""The failure sequence of the acceptance, through the engine and GET /api/v1/health/, on points
in the sensors' schema in the real test InfluxDB: all green; one failed drive; three failed
drives in one group; an OSS crash; everything cleared. Each colour change leaves one history
row, and a second evaluation of the same facts writes none."""

from __future__ import annotations

import time

import pytest

from portal.health.models import HealthStatus, StatusChange
from portal.health.services.evaluation import cached_rows, evaluate, evaluate_and_store, store
from portal.health.tests.metrics import RackMetrics
from portal.inventory.models import Drive

pytestmark = pytest.mark.services


def tree_nodes(client) -> dict[tuple[str, str], dict]:
    response = client.get("/api/v1/health/")
    assert response.status_code == 200
    body = response.json()
    found = {}

    def visit(node):
        assert set(node) >= {"kind", "name", "status", "reasons", "children"}
        found[(node["kind"], node["name"])] = node
        for child in node["children"]:
            visit(child)

    for filesystem in body["filesystems"]:
        visit(filesystem)
    return found


def group_drives(name: str) -> list[tuple[str, int, int, int]]:
    drives = Drive.objects.filter(volume_group__name=name).select_related("enclosure__array")
    return [(d.enclosure.array.name, d.enclosure.position, d.drawer, d.slot) for d in drives]


def round_and_evaluate(rack: RackMetrics, at: float | None = None) -> None:
    """Two sensor rounds 10 s apart (so CPU rates exist), then an evaluation at ``at``."""
    at = time.time() if at is None else at
    rack.write(at - 10)
    rack.write(at)
    evaluate_and_store(now=at)


@pytest.fixture
def viewer_client(client, world):
    client.login(username="viewer", password="pw-viewer-123!")
    return client


def test_the_failure_sequence_through_the_health_api(rack_inventory, metrics_db, viewer_client):
    rack = RackMetrics()
    round_and_evaluate(rack)
    nodes = tree_nodes(viewer_client)
    assert nodes[("filesystem", "scratch")]["status"] == "green", nodes[("filesystem", "scratch")]
    assert {n["status"] for n in nodes.values()} == {"green"}
    assert len([k for k in nodes if k[0] == "target"]) == 26  # 24 OSTs, MDT, MGS
    assert nodes[("target", "scratch-OST0001")]["summary"]["server"] == "oss02"
    assert StatusChange.objects.count() == 0

    # One failed drive: its OST orange, the reason names the drive and the volume group.
    failed = group_drives("ssu01-a-vg03")[4]
    array, tray, drawer, slot = failed
    rack.failed_drives = {failed}
    round_and_evaluate(rack)
    nodes = tree_nodes(viewer_client)
    ost = nodes[("target", "scratch-OST0003")]
    assert ost["status"] == "orange"
    assert ost["reasons"] == [
        f"volume group ssu01-a-vg03 is degraded: drive {array}-e{tray} drawer {drawer} "
        f"slot {slot} failed"
    ]
    assert nodes[("ssu", "ssu01")]["status"] == "orange"
    assert nodes[("filesystem", "scratch")]["status"] == "orange"
    assert nodes[("target", "scratch-OST0002")]["status"] == "green"
    change = StatusChange.objects.get(kind="target", name="scratch-OST0003")
    assert (change.old, change.new, change.processed) == ("green", "orange", False)

    # Three failed drives in that group: the OST and the filesystem red.
    rack.failed_drives = set(group_drives("ssu01-a-vg03")[4:7])
    round_and_evaluate(rack)
    nodes = tree_nodes(viewer_client)
    assert nodes[("target", "scratch-OST0003")]["status"] == "red"
    assert "has failed" in nodes[("target", "scratch-OST0003")]["reasons"][0]
    assert nodes[("filesystem", "scratch")]["status"] == "red"

    # Clear the drives, crash oss01: its OSTs move to oss02. Its sensor's last round was the
    # one above; 40 s later (more than the 30 s of silence allowed) the engine looks again.
    rack.failed_drives = set()
    rack.silent_servers = {"oss01"}
    rack.moved_to = {f"scratch-OST{i:04x}": "oss02" for i in range(0, 24, 2)}
    crash = time.time() + 40
    round_and_evaluate(rack, at=crash)
    nodes = tree_nodes(viewer_client)
    assert nodes[("server", "oss01")]["status"] == "red"
    assert "its sensor has sent nothing" in nodes[("server", "oss01")]["reasons"][0]
    assert nodes[("target", "scratch-OST0000")]["status"] == "orange"
    assert nodes[("target", "scratch-OST0000")]["reasons"] == [
        "served by its failover server oss02, not its primary oss01"
    ]
    assert nodes[("target", "scratch-OST0001")]["status"] == "green"
    assert nodes[("ssu", "ssu01")]["status"] == "orange", nodes[("ssu", "ssu01")]["reasons"]
    assert nodes[("filesystem", "scratch")]["status"] == "orange"

    # Everything cleared: green again.
    rack.silent_servers = set()
    rack.moved_to = {}
    round_and_evaluate(rack, at=crash + 20)
    nodes = tree_nodes(viewer_client)
    assert {n["status"] for n in nodes.values()} == {"green"}, [
        (k, n["reasons"]) for k, n in nodes.items() if n["status"] != "green"
    ]
    history = list(
        StatusChange.objects.filter(kind="target", name="scratch-OST0003").order_by("at", "pk")
    )
    assert [(c.old, c.new) for c in history] == [
        ("green", "orange"),
        ("orange", "red"),
        ("red", "green"),
    ]


def test_a_second_evaluation_of_the_same_facts_records_no_change(rack_inventory, metrics_db):
    rack = RackMetrics(failed_drives=set(group_drives("ssu01-b-vg01")[:1]))
    round_and_evaluate(rack)
    first = StatusChange.objects.count()
    assert first > 0  # a new object that is not green is recorded at once
    result = evaluate_and_store()
    assert result.changes == []
    assert StatusChange.objects.count() == first


def test_two_evaluations_racing_over_the_same_change_write_it_once(rack_inventory, metrics_db):
    rack = RackMetrics()
    round_and_evaluate(rack)
    rack.failed_drives = set(group_drives("ssu01-a-vg00")[:1])
    rack.write()
    # Two workers read the same cached colours and computed the same trees...
    trees = evaluate()
    first_read, second_read = cached_rows(), cached_rows()
    # ...the first stores its change, the second finds it claimed already.
    assert [(c.name, c.new) for c in store(trees, first_read) if c.kind == "target"] == [
        ("scratch-OST0000", "orange")
    ]
    assert store(trees, second_read) == []
    assert StatusChange.objects.filter(kind="target", name="scratch-OST0000").count() == 1
    assert HealthStatus.objects.get(kind="target", name="scratch-OST0000").status == "orange"


def test_the_api_needs_a_login(client, db):
    response = client.get("/api/v1/health/")
    assert response.status_code == 401


def test_status_changes_are_listed_newest_first_and_filter_by_object(
    rack_inventory, metrics_db, viewer_client
):
    rack = RackMetrics()
    round_and_evaluate(rack)
    rack.failed_drives = set(group_drives("ssu01-a-vg05")[:1])
    round_and_evaluate(rack)
    response = viewer_client.get("/api/v1/health-changes/?kind=target&name=scratch-OST0005")
    assert response.status_code == 200
    (change,) = response.json()["results"]
    assert (change["old"], change["new"]) == ("green", "orange")
    assert "ssu01-a-vg05" in change["reasons"][0]


def test_a_degraded_group_counts_whether_or_not_its_controllers_count_it(
    rack_inventory, metrics_db
):
    """The engine reads the volume groups of the arrays whose newest round counts one not ok,
    and of those whose controllers do not say (a sensor from before the count)."""
    rack = RackMetrics(failed_drives=set(group_drives("ssu01-a-vg02")[:1]))
    for uncounted in (False, True, False):
        rack.uncounted = uncounted
        round_and_evaluate(rack)
        ost = HealthStatus.objects.get(kind="target", name="scratch-OST0002")
        assert ost.status == "orange" and "ssu01-a-vg02 is degraded" in ost.reasons[0], uncounted
    rack.failed_drives = set()
    round_and_evaluate(rack)
    assert HealthStatus.objects.get(kind="target", name="scratch-OST0002").status == "green"
