"""Turning a checked spec into the plan: volume groups, targets, failover map, capacity.

Balance rules:

- Volume groups of an array alternate their preferred controller A, B, A, B ...; each array
  starts with whichever controller has fewer groups so far, so the split stays within one both
  per array and over the whole unit.
- OSTs are numbered in volume-group order from `first_ost_index`; even indices prefer the first
  server and odd indices the second (the Pacemaker recipe: odd and even OSTs on different
  servers), so each server is primary for half of them, give or take one. The failover server
  is always the other one of the pair.
- An MDS pair is active/passive: the MGT and every MDT prefer the first server.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalogue import MDS, RaidScheme
from .drives import (
    Enclosure,
    PlannedGroup,
    Slot,
    drives_per_enclosure,
    plan_enclosure,
    populate,
    spares_per_enclosure,
    survives_drawer_loss,
)
from .performance import OSS_CEILING_MB_S, USABLE_FRACTION, ost_mb_s, server_mb_s, usable_tb
from .spec import ArraySpec, Spec, read_spec

OST, MDT, MGT = "OST", "MDT", "MGT"


@dataclass(frozen=True)
class VolumeGroup:
    name: str
    array: ArraySpec
    raid: RaidScheme
    segment_kib: int
    controller: str
    planned: PlannedGroup

    @property
    def data_drives(self) -> int:
        return self.raid.data_drives

    def as_plan(self) -> dict[str, object]:
        return {
            "name": self.name,
            "array": self.array.name,
            "raid": self.raid.name,
            "segment_kib": self.segment_kib,
            "controller": self.controller,
            "drives": [slot.as_plan() for slot in self.planned.drives],
            "enclosure": self.planned.enclosure.id,
            "raid_level": self.raid.level,
            "data_drives": self.data_drives,
            "usable_tb": usable_tb(self.data_drives, self.array.drive_tb),
            "survives_drawer_loss": survives_drawer_loss(self.planned.drives, self.raid),
        }


@dataclass(frozen=True)
class Target:
    label: str
    index: int
    kind: str
    volume_group: VolumeGroup
    primary: str
    failover: str
    # Block device and mount point names: the label, except the MGT whose label "MGS" is the
    # same in every filesystem.
    name: str

    def as_plan(self) -> dict[str, object]:
        return {
            "label": self.label,
            "index": self.index,
            "kind": self.kind,
            "volume_group": self.volume_group.name,
            "primary": self.primary,
            "failover": self.failover,
            "controller": self.volume_group.controller,
            "device": f"/dev/mapper/{self.name}",
            "mountpoint": f"/mnt/lustre/{self.name}",
            "array": self.volume_group.array.name,
        }


def make_plan(spec: dict) -> dict:
    """The exact layout to build for `spec`, as JSON-ready data; `SpecError` if it cannot be."""
    return build_plan(read_spec(spec))


def build_plan(spec: Spec) -> dict:
    arrays_plan = []
    volume_groups: list[VolumeGroup] = []
    spares: list[tuple[ArraySpec, Slot]] = []
    per_controller = {"A": 0, "B": 0}
    for array in spec.arrays:
        enclosures, groups, array_spares = _plan_array(array, spec.raid)
        spares += [(array, slot) for slot in array_spares]
        first = "A" if per_controller["A"] <= per_controller["B"] else "B"
        second = "B" if first == "A" else "A"
        for number, group in enumerate(groups):
            controller = first if number % 2 == 0 else second
            per_controller[controller] += 1
            volume_groups.append(
                VolumeGroup(
                    name=f"{array.name}-vg{number:02d}",
                    array=array,
                    raid=spec.raid,
                    segment_kib=spec.segment_kib,
                    controller=controller,
                    planned=group,
                )
            )
        arrays_plan.append(
            {
                "name": array.name,
                "controller": array.controller.name,
                "expansions": [model.name for model in array.expansions],
                "drive_tb": array.drive_tb,
                "enclosures": [
                    {
                        "id": enclosure.id,
                        "model": enclosure.model.name,
                        "drawers": enclosure.model.drawers,
                        "slots_per_drawer": enclosure.model.slots_per_drawer,
                        "kind": enclosure.model.kind,
                        "drives": len(enclosure.populated),
                    }
                    for enclosure in enclosures
                ],
                "drives": array.drives,
                "global_spares": array.global_spares,
            }
        )

    targets = _targets(spec, volume_groups)
    hostnames = [server.hostname for server in spec.servers]
    return {
        "filesystem": spec.filesystem,
        "ssu": spec.ssu,
        "role": spec.role,
        "servers": [server.as_plan() for server in spec.servers],
        "raid": spec.raid.name,
        "segment_kib": spec.segment_kib,
        "arrays": arrays_plan,
        "capacity": _capacity(spec, volume_groups, len(spares)),
        "volume_groups": [group.as_plan() for group in volume_groups],
        "targets": [target.as_plan() for target in targets],
        "spares": [{**slot.as_plan(), "array": array.name} for array, slot in spares],
        "expected_bandwidth_mb_s": _bandwidth(spec, targets, hostnames),
        "failover_map": _failover_map(targets, hostnames),
        "first_ost_index": spec.first_ost_index,
        "first_mdt_index": spec.first_mdt_index,
    }


def _plan_array(
    array: ArraySpec, raid: RaidScheme
) -> tuple[list[Enclosure], list[PlannedGroup], list[Slot]]:
    counts = drives_per_enclosure(array.models, array.drives)
    spare_split = spares_per_enclosure(counts, array.global_spares, raid)
    enclosures: list[Enclosure] = []
    groups: list[PlannedGroup] = []
    spares: list[Slot] = []
    for enclosure_id, model, count, spare_count in zip(
        array.enclosure_ids(), array.models, counts, spare_split, strict=True
    ):
        enclosure = populate(enclosure_id, model, count)
        enclosure_groups, enclosure_spares = plan_enclosure(enclosure, spare_count, raid)
        enclosures.append(enclosure)
        groups += enclosure_groups
        spares += enclosure_spares
    return enclosures, groups, spares


def _targets(spec: Spec, volume_groups: list[VolumeGroup]) -> list[Target]:
    first, second = (server.hostname for server in spec.servers)
    fs = spec.filesystem
    targets = []
    if spec.role == MDS:
        for number, group in enumerate(volume_groups):
            if number == 0:
                # The MGS shares the first MDT's volume group, as in the vendor MDS layout.
                targets.append(Target("MGS", 0, MGT, group, first, second, f"{fs}-MGT"))
            index = spec.first_mdt_index + number
            label = f"{fs}-MDT{index:04x}"
            targets.append(Target(label, index, MDT, group, first, second, label))
        return targets
    for number, group in enumerate(volume_groups):
        index = spec.first_ost_index + number
        primary, failover = (first, second) if index % 2 == 0 else (second, first)
        label = f"{fs}-OST{index:04x}"
        targets.append(Target(label, index, OST, group, primary, failover, label))
    return targets


def _capacity(spec: Spec, volume_groups: list[VolumeGroup], spares: int) -> dict[str, object]:
    data_drives = sum(group.data_drives for group in volume_groups)
    return {
        "raw_tb": round(sum(array.drives * array.drive_tb for array in spec.arrays), 3),
        "usable_tb": round(
            sum(usable_tb(group.data_drives, group.array.drive_tb) for group in volume_groups), 3
        ),
        "drives": sum(array.drives for array in spec.arrays),
        "data_drives": data_drives,
        "spares": spares,
        "volume_groups": len(volume_groups),
        "usable_fraction": USABLE_FRACTION,
    }


def _bandwidth(spec: Spec, targets: list[Target], hostnames: list[str]) -> dict[str, object]:
    osts = [target for target in targets if target.kind == OST]
    per_server = {
        host: server_mb_s(sum(target.primary == host for target in osts), spec.segment_kib)
        for host in hostnames
    }
    return {
        "total": round(sum(per_server.values()), 1),
        "per_server": per_server,
        "per_ost": ost_mb_s(spec.segment_kib) if osts else 0.0,
        "after_failover": server_mb_s(len(osts), spec.segment_kib),
        "oss_ceiling": OSS_CEILING_MB_S,
    }


def _failover_map(targets: list[Target], hostnames: list[str]) -> dict[str, dict[str, list]]:
    return {
        host: {
            "normal": [target.label for target in targets if target.primary == host],
            "after_partner_failure": [target.label for target in targets],
        }
        for host in hostnames
    }
