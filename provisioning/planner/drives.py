"""Where the drives go: installed drives per drawer, global hot spares, and volume groups.

Rules, in the order they are applied:

1. Installed drives fill the enclosures of an array in order (controller enclosure first), each
   before the next; inside a partly filled enclosure they spread evenly over the drawers, lowest
   slots first.
2. Volume groups never span enclosures, so an enclosure is the largest thing a group depends on.
   Every enclosure's drives, minus the spares placed in it, must fill whole groups; drives that
   would be left in no group and not declared as spares make the spec invalid.
3. Spares sit in the highest slots of the drawers that hold the most drives, so they spread over
   the drawers too.
4. Each group takes its drives one at a time from the drawer where it has the fewest so far
   (then the drawer with the most drives left), so a 10-drive group takes exactly 2 from each
   of 5 drawers: losing a whole drawer leaves every group degraded but online.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalogue import EnclosureModel, RaidScheme


@dataclass(frozen=True, order=True)
class Slot:
    """One drive bay, numbered as the enclosure's front panel numbers it (from 1)."""

    enclosure: str
    drawer: int
    slot: int

    def as_plan(self) -> dict[str, object]:
        return {"enclosure": self.enclosure, "drawer": self.drawer, "slot": self.slot}


@dataclass(frozen=True)
class Enclosure:
    """One enclosure of a planned array, with the slots that hold a drive."""

    id: str
    model: EnclosureModel
    populated: tuple[Slot, ...]


@dataclass(frozen=True)
class PlannedGroup:
    """The drives of one volume group, in the order the array is told to build it.

    For RAID-10, consecutive drives (0 and 1, 2 and 3, ...) are mirror partners.
    """

    enclosure: Enclosure
    drives: tuple[Slot, ...]


class DriveUseError(ValueError):
    """The drive count and the spare count leave drives that no volume group can take."""


def drives_per_enclosure(models: list[EnclosureModel], installed: int) -> list[int]:
    """Installed drives per enclosure when they fill the enclosures in order."""
    counts = []
    left = installed
    for model in models:
        counts.append(min(left, model.drives))
        left -= counts[-1]
    return counts


def valid_spare_counts(counts: list[int], scheme: RaidScheme) -> list[int]:
    """Every global spare count that leaves whole groups and at least one group."""
    remainders = sum(count % scheme.drives for count in counts)
    groups = sum(count // scheme.drives for count in counts)
    return [remainders + extra * scheme.drives for extra in range(groups)]


def spares_per_enclosure(counts: list[int], spares: int, scheme: RaidScheme) -> list[int]:
    """Split an array's global spares over its enclosures so every enclosure fills whole groups.

    Each enclosure first takes the drives its groups cannot use; spares beyond those come in
    whole groups' worth, from the enclosure with the most groups.
    """
    total = sum(counts)
    split = [count % scheme.drives for count in counts]
    if spares not in valid_spare_counts(counts, scheme):
        raise DriveUseError(_unusable_drives_message(counts, spares, scheme))
    extra = spares - sum(split)
    while extra > 0:
        roomiest = max(range(len(counts)), key=lambda index: (counts[index] - split[index], -index))
        split[roomiest] += scheme.drives
        extra -= scheme.drives
    assert sum(split) == spares <= total
    return split


def _unusable_drives_message(counts: list[int], spares: int, scheme: RaidScheme) -> str:
    total, width = sum(counts), scheme.drives
    valid = valid_spare_counts(counts, scheme)
    if not valid:
        return (
            f"{total} drives cannot make a single volume group of {width} drives "
            f"(per enclosure: {', '.join(map(str, counts))})"
        )
    if spares > total:
        return f"{spares} global spares requested but the array holds only {total} drives"
    remainders = sum(count % width for count in counts)
    groups = sum(count // width for count in counts)
    if spares > remainders:
        # Spares beyond the remainders come out of groups, a whole group at a time.
        groups = max(groups - math.ceil((spares - remainders) / width), 0)
    unused = total - spares - groups * width
    reason = (
        f"{unused} drive(s) would be left unused (neither in a volume group nor a spare)"
        if unused
        else "no volume group would be left"
    )
    shown = ", ".join(map(str, valid[:4])) + (", ..." if len(valid) > 4 else "")
    return (
        f"{reason}: {total} drives (per enclosure: {', '.join(map(str, counts))}) with "
        f"{spares} global spares; groups of {width} stay inside one enclosure, so each "
        f"enclosure's drives minus its spares must fill whole groups. global_spares that work "
        f"here: {shown}"
    )


def populate(enclosure_id: str, model: EnclosureModel, installed: int) -> Enclosure:
    """The slots holding drives: spread evenly over the drawers, lowest slots first."""
    per_drawer, extra = divmod(installed, model.drawers)
    populated = [
        Slot(enclosure_id, drawer, slot)
        for drawer in range(1, model.drawers + 1)
        for slot in range(1, per_drawer + (1 if drawer <= extra else 0) + 1)
    ]
    return Enclosure(enclosure_id, model, tuple(populated))


def plan_enclosure(
    enclosure: Enclosure, spares: int, scheme: RaidScheme
) -> tuple[list[PlannedGroup], list[Slot]]:
    """Choose the spares and the volume groups of one enclosure; every drive ends in one."""
    free: dict[int, list[Slot]] = {drawer: [] for drawer in range(1, enclosure.model.drawers + 1)}
    for slot in enclosure.populated:
        free[slot.drawer].append(slot)

    spare_slots = []
    for _ in range(spares):
        fullest = max(free, key=lambda drawer: (len(free[drawer]), -drawer))
        spare_slots.append(free[fullest].pop())  # highest slot of that drawer

    groups = []
    for _ in range(sum(len(slots) for slots in free.values()) // scheme.drives):
        taken = {drawer: 0 for drawer in free}
        picked = []
        for _ in range(scheme.drives):
            drawer = min(
                (drawer for drawer in free if free[drawer]),
                key=lambda drawer: (taken[drawer], -len(free[drawer]), drawer),
            )
            taken[drawer] += 1
            picked.append(free[drawer].pop(0))
        # RAID-6 order does not matter to the array: list drives by drawer and slot for people.
        # RAID-10 keeps the pick order, which alternates drawers, so mirror partners do too.
        ordered = tuple(sorted(picked)) if scheme.level == 6 else tuple(picked)
        groups.append(PlannedGroup(enclosure, ordered))
    leftover = [slot for slots in free.values() for slot in slots]
    assert not leftover, f"validation let unused drives through: {leftover}"
    return groups, sorted(spare_slots)


def survives_drawer_loss(drives: tuple[Slot, ...], scheme: RaidScheme) -> bool:
    """Whether the group stays online with any one drawer of its enclosure pulled or dead."""
    drawers = {(slot.enclosure, slot.drawer) for slot in drives}
    for lost in drawers:
        if scheme.level == 6:
            if sum((slot.enclosure, slot.drawer) == lost for slot in drives) > 2:
                return False
        else:
            pairs = zip(drives[0::2], drives[1::2], strict=True)
            if any((a.enclosure, a.drawer) == (b.enclosure, b.drawer) == lost for a, b in pairs):
                return False
    return True
