"""The inventory follows what the arrays and servers report: record_observations."""

from __future__ import annotations

import pytest

from portal.inventory import models
from portal.inventory.choices import DriveState, TargetState, VolumeGroupState
from portal.inventory.services import record_observations, save_plan

pytestmark = pytest.mark.django_db


@pytest.fixture
def ssu(filesystem_with_mds, ssu_spec):
    return save_plan(ssu_spec)


def test_targets_mounted_on_primary_partner_or_nowhere(ssu):
    first, second, third = models.Target.objects.filter(volume_group__array__pair=ssu)[:3]
    partner = first.failover_server.hostname
    changed = record_observations(
        placements={
            first.label: first.primary_server.hostname,
            second.label: second.failover_server.hostname,
            third.label: None,
        }
    )
    assert changed == 3
    states = {
        t.label: (t.state, t.current_server and t.current_server.hostname)
        for t in models.Target.objects.filter(label__in=[first.label, second.label, third.label])
    }
    assert states[first.label] == (TargetState.MOUNTED, first.primary_server.hostname)
    assert states[second.label] == (TargetState.FAILED_OVER, second.failover_server.hostname)
    assert states[third.label] == (TargetState.OFFLINE, None)
    # The same report again changes nothing; a move to the partner changes one row.
    assert record_observations(placements={first.label: first.primary_server.hostname}) == 0
    assert record_observations(placements={first.label: partner}) == 1


def test_volume_group_states_as_the_array_words_them(ssu):
    groups = list(models.VolumeGroup.objects.filter(array__pair=ssu).select_related("array"))
    report = {(g.array.name, g.name): "Optimal" for g in groups}
    assert record_observations(group_states=report) == len(groups)
    assert set(models.VolumeGroup.objects.values_list("state", flat=True)) >= {
        VolumeGroupState.OPTIMAL
    }
    one, two, three = groups[:3]
    changed = record_observations(
        group_states={
            (one.array.name, one.name): "degraded",
            (two.array.name, two.name): "Failed",
            (three.array.name, three.name): "something-new",
            ("no-such-array", one.name): "failed",
        }
    )
    assert changed == 3
    one.refresh_from_db(), two.refresh_from_db(), three.refresh_from_db()
    assert (one.state, two.state, three.state) == (
        VolumeGroupState.DEGRADED,
        VolumeGroupState.FAILED,
        VolumeGroupState.DEGRADED,
    )


def test_drive_states_by_the_sensors_drive_ids(ssu):
    array = ssu.arrays.order_by("name").first()
    assigned = models.Drive.objects.filter(
        enclosure__array=array, enclosure__position=1, volume_group__isnull=False
    ).first()
    # The reference SSU uses every slot; make one a hot spare outside any group.
    spare = models.Drive.objects.filter(enclosure__array=array, enclosure__position=0).last()
    models.Drive.objects.filter(pk=spare.pk).update(state=DriveState.SPARE, volume_group=None)
    assigned_id = f"1,{assigned.drawer},{assigned.slot}"
    spare_id = f"{spare.enclosure.name}:{spare.drawer}:{spare.slot}"
    changed = record_observations(
        drive_states={
            (array.name, assigned_id): "failed",
            (array.name, spare_id): "optimal",  # a spare in standby reports optimal
            (array.name, "7,9,99"): "failed",  # no such tray: ignored
        }
    )
    assert changed == 1
    assigned.refresh_from_db(), spare.refresh_from_db()
    assert (assigned.state, spare.state) == (DriveState.FAILED, DriveState.SPARE)
    assert record_observations(drive_states={(array.name, assigned_id): "Rebuilding"}) == 1
    assert record_observations(drive_states={(array.name, assigned_id): "optimal"}) == 1
    assigned.refresh_from_db()
    # A member a failure touched once is "assigned" again, the word of every other member.
    assert assigned.state == DriveState.ASSIGNED
    # A new drive in its slot ("Replaced" until reconstructed) holds no data yet.
    assert record_observations(drive_states={(array.name, assigned_id): "replaced"}) == 1
    assigned.refresh_from_db()
    assert assigned.state == DriveState.REBUILDING
