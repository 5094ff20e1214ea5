"""The inventory says what the rack reports, after every evaluation: a volume group degraded
and its drive failed while the array says so, a target failed over while its partner serves
it, and all back to optimal and mounted once repaired. A silent server's targets are not
called unmounted: nobody knows."""

from __future__ import annotations

import time

import pytest

from portal.health.services.evaluation import evaluate_and_store
from portal.health.tests.metrics import RackMetrics
from portal.health.tests.test_health_api_sequence import (
    group_drives,
    round_and_evaluate,
    tree_nodes,
)
from portal.inventory.models import Drive, Target, VolumeGroup

pytestmark = pytest.mark.services


def states():
    return {
        "vg02": VolumeGroup.objects.get(name="ssu01-a-vg02").state,
        "ost": Target.objects.get(label="scratch-OST0001").state,
        "ost_server": Target.objects.get(label="scratch-OST0001").current_server.hostname,
        "drives": sorted(Drive.objects.filter(state="failed").values_list("slot", flat=True)),
    }


def test_volume_groups_drives_and_targets_follow_the_reports(rack_inventory, metrics_db):
    rack = RackMetrics()
    round_and_evaluate(rack)
    assert states() == {"vg02": "optimal", "ost": "mounted", "ost_server": "oss02", "drives": []}
    failed = group_drives("ssu01-a-vg02")[3]
    rack.failed_drives = {failed}
    rack.moved_to = {"scratch-OST0001": "oss01"}
    round_and_evaluate(rack)
    assert states() == {
        "vg02": "degraded",
        "ost": "failed_over",
        "ost_server": "oss01",
        "drives": [failed[3]],
    }
    rack.failed_drives, rack.moved_to = set(), {}
    round_and_evaluate(rack)
    assert states() == {"vg02": "optimal", "ost": "mounted", "ost_server": "oss02", "drives": []}


def test_a_silent_servers_targets_keep_their_last_known_place(rack_inventory, metrics_db):
    rack = RackMetrics()
    round_and_evaluate(rack)
    rack.silent_servers = {"oss01", "oss02"}
    rack.write()
    evaluate_and_store(now=time.time() + 120)  # both silent for two minutes
    target = Target.objects.get(label="scratch-OST0001")
    assert (target.state, target.current_server.hostname) == ("mounted", "oss02")


def test_a_swapped_drive_rebuilds_with_its_progress_then_is_assigned_like_the_others(
    rack_inventory, metrics_db, client, world
):
    """Issue 31: right after the swap the new drive is not "optimal" while its group is
    degraded; the reason says the reconstruction, its drive and percent; once done the drive
    is "assigned", the word of every other member."""
    rack = RackMetrics()
    failed = group_drives("ssu01-a-vg02")[3]
    array, tray, drawer, slot = failed
    drive = Drive.objects.select_related("enclosure").get(
        enclosure__array__name=array, enclosure__position=tray, drawer=drawer, slot=slot
    )
    location = f"{drive.enclosure.name} drawer {drawer} slot {slot}"
    client.login(username="viewer", password="pw-viewer-123!")
    rack.failed_drives = {failed}
    round_and_evaluate(rack)
    rack.failed_drives, rack.replaced_drives = set(), {failed}  # the technician's swap
    round_and_evaluate(rack)
    drive.refresh_from_db()
    assert drive.state == "rebuilding"
    assert tree_nodes(client)[("target", "scratch-OST0002")]["reasons"] == [
        f"volume group ssu01-a-vg02 is degraded: drive {location} replaced, waiting for its "
        "reconstruction"
    ]
    rack.reconstructing = {"ssu01-a-vg02": 42}
    round_and_evaluate(rack)
    assert tree_nodes(client)[("target", "scratch-OST0002")]["reasons"] == [
        f"volume group ssu01-a-vg02 is degraded: reconstructing onto drive {location}, 42 % done"
    ]
    drive.refresh_from_db()
    assert drive.state == "rebuilding"
    rack.replaced_drives, rack.reconstructing = set(), {}
    round_and_evaluate(rack)
    drive.refresh_from_db()
    members = set(
        Drive.objects.filter(volume_group__name="ssu01-a-vg02").values_list("state", flat=True)
    )
    assert (drive.state, members) == ("assigned", {"assigned"})
