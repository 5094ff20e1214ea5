"""What the rack reports (volume group and drive states, where each target runs) recorded in
the inventory."""

from __future__ import annotations

import re

from django.db import transaction

from portal.inventory.choices import (
    DriveState,
    TargetState,
    VolumeGroupState,
)
from portal.inventory.models import (
    Drive,
    Enclosure,
    Server,
    Target,
    VolumeGroup,
)

# Array state words (E-Series/SANtricity and generic) and what the inventory calls them. A word
# not listed is neither known good nor known lost: a volume group is then "degraded" (someone
# must look) and a drive keeps its state.
_GROUP_STATES = {
    "optimal": VolumeGroupState.OPTIMAL,
    "ok": VolumeGroupState.OPTIMAL,
    "online": VolumeGroupState.OPTIMAL,
    "degraded": VolumeGroupState.DEGRADED,
    "reconstructing": VolumeGroupState.DEGRADED,
    "rebuilding": VolumeGroupState.DEGRADED,
    "critical": VolumeGroupState.CRITICAL,
    "failed": VolumeGroupState.FAILED,
    "offline": VolumeGroupState.FAILED,
    "missing": VolumeGroupState.FAILED,
}
_DRIVE_GOOD = {"optimal", "ok", "online", "assigned"}
_DRIVE_SPARE = {"standby", "spare", "hot_spare", "hot spare"}
_DRIVE_REBUILDING = {"rebuilding", "reconstructing", "copyback", "replaced"}
_DRIVE_LOST = {"failed", "offline", "removed", "missing", "bypassed", "incompatible"}
# A drive id as the sensors' `array` measurement names it: tray (the enclosure's position in the
# array, 0 = the controller shelf) or enclosure name, then drawer and slot ("1,2,5", "1.2.5",
# "ssu01-a-e1:2:5").
_DRIVE_ID_RE = re.compile(
    r"^(?:(?P<enclosure>.+?)[:/])?(?P<tray>\d+)?[.,:/]?(?P<drawer>\d+)[.,:/](?P<slot>\d+)$"
)


def group_state(word: str) -> str:
    """The inventory's volume group state for a state word an array reports."""
    word = word.strip().lower()
    if word in _GROUP_STATES:
        return _GROUP_STATES[word]
    return VolumeGroupState.FAILED if "fail" in word else VolumeGroupState.DEGRADED


def drive_state(word: str, drive: Drive) -> str:
    """The inventory's state for a drive an array reports as ``word``."""
    word = word.strip().lower()
    if word in _DRIVE_LOST or "fail" in word:
        return DriveState.FAILED
    if word in _DRIVE_REBUILDING:
        return DriveState.REBUILDING
    if word in _DRIVE_SPARE:
        return DriveState.SPARE
    if word in _DRIVE_GOOD:
        # A hot spare waiting in standby reports "optimal" too; a drive in no group is blank.
        # A working member is "assigned", as provisioning left every member: one word for all
        # of them, whether or not a failure touched it once.
        if drive.volume_group_id is not None:
            return DriveState.ASSIGNED
        return DriveState.SPARE if drive.state == DriveState.SPARE else DriveState.BLANK
    return drive.state


def drive_location(ident: str, enclosures: list[Enclosure]) -> tuple[Enclosure, int, int] | None:
    """(enclosure, drawer, slot) of the drive an array names ``ident``, or None if unknown."""
    match = _DRIVE_ID_RE.match(ident.strip())
    if not match:
        return None
    by_position = {enclosure.position: enclosure for enclosure in enclosures}
    by_name = {enclosure.name: enclosure for enclosure in enclosures}
    enclosure = None
    if match.group("enclosure") in by_name:
        enclosure = by_name[match.group("enclosure")]
    elif match.group("tray") is not None:
        enclosure = by_position.get(int(match.group("tray")))
    elif len(enclosures) == 1:
        enclosure = enclosures[0]
    if enclosure is None:
        return None
    return enclosure, int(match.group("drawer")), int(match.group("slot"))


class DriveMap:
    """The drives of some arrays, found by the ids the arrays report: two queries, once.

    The health evaluation builds one per round for the arrays that report faulty drives;
    recording observations uses the same.
    """

    def __init__(self, arrays: set[str]) -> None:
        self.enclosures: dict[str, list[Enclosure]] = {}
        for enclosure in Enclosure.objects.filter(array__name__in=arrays).select_related("array"):
            self.enclosures.setdefault(enclosure.array.name, []).append(enclosure)
        self.drives = {
            (drive.enclosure_id, drive.drawer, drive.slot): drive
            for drive in Drive.objects.filter(enclosure__array__name__in=arrays).only(
                "enclosure_id", "drawer", "slot", "state", "volume_group_id"
            )
        }

    def find(self, array: str, ident: str) -> tuple[str, Drive | None]:
        """The drive's place in words ("ssu01-a-e1 drawer 2 slot 5") and the drive, which is
        None when the inventory does not know it."""
        location = drive_location(ident, self.enclosures.get(array, []))
        if location is None:
            return f"{ident} of {array}", None
        enclosure, drawer, slot = location
        return (
            f"{enclosure.name} drawer {drawer} slot {slot}",
            self.drives.get((enclosure.pk, drawer, slot)),
        )


@transaction.atomic
def record_observations(
    *,
    placements: dict[str, str | None] | None = None,
    group_states: dict[tuple[str, str], str] | None = None,
    drive_states: dict[tuple[str, str], str] | None = None,
) -> int:
    """Make the inventory say what the rack reports; return how many rows changed.

    ``placements``: target label -> hostname serving it, None when mounted nowhere.
    ``group_states``: (array name, volume group name) -> state word as the array reports it.
    ``drive_states``: (array name, drive id as the sensors name it) -> state word.
    Objects the inventory does not know are ignored; only changed rows are written.
    """
    return (
        _record_placements(placements or {})
        + _record_group_states(group_states or {})
        + _record_drive_states(drive_states or {})
    )


def _record_placements(placements: dict[str, str | None]) -> int:
    if not placements:
        return 0
    hosts = {host for host in placements.values() if host}
    servers = dict(Server.objects.filter(hostname__in=hosts).values_list("hostname", "pk"))
    changed = []
    # Plain rows: the health engine calls this every round with every target of the rack.
    for pk, label, primary, was_on, was in Target.objects.filter(label__in=placements).values_list(
        "pk", "label", "primary_server_id", "current_server_id", "state"
    ):
        host = placements[label]
        current = servers.get(host) if host else None
        if current is None:
            state = TargetState.OFFLINE
        elif current == primary:
            state = TargetState.MOUNTED
        else:
            state = TargetState.FAILED_OVER
        if (was_on, was) != (current, state):
            changed.append(Target(pk=pk, current_server_id=current, state=state))
    Target.objects.bulk_update(changed, ["current_server", "state"])
    return len(changed)


def _record_group_states(group_states: dict[tuple[str, str], str]) -> int:
    if not group_states:
        return 0
    arrays = {array for array, _ in group_states}
    group_names = {name for _, name in group_states}
    changed = []
    for pk, name, was, array in VolumeGroup.objects.filter(
        array__name__in=arrays, name__in=group_names
    ).values_list("pk", "name", "state", "array__name"):
        word = group_states.get((array, name))
        if word is None:
            continue
        state = group_state(word)
        if was != state:
            changed.append(VolumeGroup(pk=pk, state=state))
    VolumeGroup.objects.bulk_update(changed, ["state"])
    return len(changed)


def _record_drive_states(drive_states: dict[tuple[str, str], str]) -> int:
    if not drive_states:
        return 0
    drives = DriveMap({array for array, _ in drive_states})
    changed = []
    for (array, ident), word in drive_states.items():
        _, drive = drives.find(array, ident)
        if drive is None:
            continue
        state = drive_state(word, drive)
        if drive.state != state:
            drive.state = state
            changed.append(drive)
    Drive.objects.bulk_update(changed, ["state"])
    return len(changed)
