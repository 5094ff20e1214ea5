"""The acceptance sequence through GET /api/v1/health/ on a virtual rack whose servers run the
product's sensor agent: all green; a drive fails; three drives of one group fail; an OSS
crashes and its partner takes over; everything is repaired and failed back."""

from __future__ import annotations

import time

import pytest
from django.conf import settings

from portal.health.services.evaluation import evaluate_and_store
from portal.health.tests.conftest import SENSOR_INTERVAL, virtual_rack_thresholds
from portal.inventory.models import Drive, Target

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.rack(seconds=100)]


def api_nodes(client) -> dict[tuple[str, str], dict]:
    response = client.get("/api/v1/health/")
    assert response.status_code == 200
    found = {}

    def visit(node):
        found[(node["kind"], node["name"])] = node
        for child in node["children"]:
            visit(child)

    for filesystem in response.json()["filesystems"]:
        visit(filesystem)
    return found


def shows(node: dict, wanted: str | tuple[str, str]) -> bool:
    """``wanted`` is a colour, or (colour, words one of the reasons contains)."""
    status, words = wanted if isinstance(wanted, tuple) else (wanted, "")
    return node.get("status") == status and (
        not words or any(words in reason for reason in node.get("reasons", []))
    )


def wait_for(client, expected: dict, seconds: float, evaluate=evaluate_and_store) -> dict:
    """Evaluate as the periodic task does until the API shows every expected colour
    (``evaluate``: what runs each round, the colours alone by default)."""
    deadline = time.monotonic() + seconds
    while True:
        evaluate()
        nodes = api_nodes(client)
        wrong = {
            key: (nodes.get(key, {}).get("status"), nodes.get(key, {}).get("reasons"))
            for key, wanted in expected.items()
            if not shows(nodes.get(key, {}), wanted)
        }
        if not wrong:
            return nodes
        if time.monotonic() > deadline:
            raise AssertionError(f"after {seconds:.0f} s still: {wrong}")
        time.sleep(0.5)


def drive_location(array: str, tray: int, drawer: int, slot: int) -> tuple[str, str]:
    drive = Drive.objects.select_related("volume_group", "enclosure").get(
        enclosure__array__name=array, enclosure__position=tray, drawer=drawer, slot=slot
    )
    return f"{drive.enclosure.name} drawer {drawer} slot {slot}", drive.volume_group.name


def test_the_failure_sequence_on_a_virtual_rack_through_the_api(
    virtual_rack, metrics_db, client, world, tmp_path
):
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")
    # Two sensor rounds, plus one for the agents' start.
    within = 3 * SENSOR_INTERVAL + 5

    nodes = wait_for(client, {("filesystem", "scratch"): "green"}, within + 10)
    assert {n["status"] for n in nodes.values()} == {"green"}, [
        (key, n["reasons"]) for key, n in nodes.items() if n["status"] != "green"
    ]
    assert len([key for key in nodes if key[0] == "target"]) == 26

    # One failed drive: its OST orange within two sensor intervals, naming drive and group.
    location, group = drive_location("ssu01-a", 0, 2, 5)
    assert group == "ssu01-a-vg02"
    virtual_rack.inject("drive-failed", array="ssu01-a", drive="0,2,5")
    nodes = wait_for(
        client,
        {("target", "scratch-OST0002"): "orange", ("filesystem", "scratch"): "orange"},
        2 * SENSOR_INTERVAL + 3,
    )
    assert nodes[("target", "scratch-OST0002")]["reasons"] == [
        f"volume group ssu01-a-vg02 is degraded: drive {location} failed"
    ]
    assert nodes[("ssu", "ssu01")]["status"] == "orange"

    # Three failed drives in one group: that OST and the filesystem red.
    virtual_rack.clear_all()
    virtual_rack.inject("drive-failed", array="ssu01-a", volume_group="ssu01-a-vg03", count=3)
    nodes = wait_for(
        client,
        {
            ("target", "scratch-OST0003"): ("red", "volume group ssu01-a-vg03 has failed"),
            ("filesystem", "scratch"): ("red", "scratch-OST0003 lost"),
        },
        2 * SENSOR_INTERVAL + 3,
    )

    # Repaired and failed back, then an OSS crash: the partner fences it and takes its OSTs.
    virtual_rack.clear_all()
    virtual_rack.fail_back()
    wait_for(client, {("filesystem", "scratch"): "green"}, within)
    virtual_rack.inject("server-crash", server="oss01")
    expected = {("server", "oss01"): "red", ("ssu", "ssu01"): "orange"}
    expected.update({("target", f"scratch-OST{i:04x}"): "orange" for i in range(0, 24, 2)})
    nodes = wait_for(client, expected, 2 * SENSOR_INTERVAL + 3)
    assert nodes[("target", "scratch-OST0000")]["reasons"] == [
        "served by its failover server oss02, not its primary oss01"
    ]
    # The partner serves all 24 (it may run warm doing so, which is its own warning).
    assert nodes[("server", "oss02")]["status"] != "red"
    assert nodes[("server", "oss02")]["summary"]["targets"] == 24
    assert nodes[("filesystem", "scratch")]["status"] == "orange"

    # Everything repaired and failed back: green again.
    virtual_rack.clear_all()
    virtual_rack.fail_back()
    nodes = wait_for(client, {("filesystem", "scratch"): "green"}, within)
    assert {n["status"] for n in nodes.values()} == {"green"}


def test_other_rows_of_the_failure_matrix_on_a_virtual_rack(
    virtual_rack, metrics_db, client, world, tmp_path
):
    """A failed RAID controller, a whole drawer out, a dead BMC: each is orange where the
    failure matrix says, and green again once repaired."""
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")
    within = 3 * SENSOR_INTERVAL + 5
    wait_for(client, {("filesystem", "scratch"): "green"}, within + 10)

    virtual_rack.inject("controller-failed", array="ssu01-b", controller="B")
    wait_for(
        client,
        {("array", "ssu01-b"): ("orange", "controller B has failed"), ("ssu", "ssu01"): "orange"},
        2 * SENSOR_INTERVAL + 3,
    )
    virtual_rack.clear_all()
    wait_for(client, {("filesystem", "scratch"): "green"}, within)

    # Drawer 3 of ssu01-a's expansion enclosure: every group there loses drives, all online.
    virtual_rack.inject("drawer-failed", array="ssu01-a", enclosure=1, drawer=3)
    groups = sorted(
        set(
            Drive.objects.filter(
                enclosure__array__name="ssu01-a", enclosure__position=1, drawer=3
            ).values_list("volume_group__name", flat=True)
        )
        - {None}
    )
    labels = set(
        Target.objects.filter(volume_group__name__in=groups).values_list("label", flat=True)
    )
    assert len(labels) == 6
    nodes = wait_for(
        client,
        {("target", label): ("orange", "missing") for label in labels},
        2 * SENSOR_INTERVAL + 3,
    )
    assert all(nodes[("target", label)]["summary"]["server"] for label in labels)  # online
    virtual_rack.clear_all()
    wait_for(client, {("filesystem", "scratch"): "green"}, within)

    # oss02's BMC stops answering: the PDU is its only fence device left.
    virtual_rack.inject("bmc-down", server="oss02")
    wait_for(
        client,
        {("server", "oss02"): ("orange", "only the PDU can fence it")},
        4 * SENSOR_INTERVAL + 5,
    )
    virtual_rack.clear_all()
    nodes = wait_for(client, {("filesystem", "scratch"): "green"}, within)
    assert {n["status"] for n in nodes.values()} == {"green"}
