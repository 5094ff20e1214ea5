"""A built pair's plan as its rows hold it: the spec read back from the rows, planned again and
checked against them. What every job builds from (``pair_plan``)."""

from __future__ import annotations

import json

from portal.inventory.choices import (
    PairKind,
    TargetKind,
)
from portal.inventory.models import (
    Drive,
    ServerPair,
    StorageArray,
    Target,
    VolumeGroup,
)
from provisioning.planner import SpecError, make_plan


class RowsDisagree(Exception):
    """The pair's rows no longer describe the layout the planner makes of their hardware."""


def pair_plan(pair: ServerPair) -> dict:
    """The pair's plan as its inventory rows say it now: what every job builds from.

    The rows are the one truth: the spec the pair was confirmed with is read back from them
    (``pair_spec``) and planned again (the planner is deterministic), then the facts only rows
    hold are laid over it (where each target runs and from which device). An administrator's
    edit of a server reaches the Pacemaker configuration, the array layout and the mkfs
    arguments of the next run from here, as it reaches the sensors through
    ``ansible_inventory``. ``ServerPair.plan`` is only the record of what was confirmed; no
    job reads it. Raises ``RowsDisagree`` when the volume groups, their drives or the targets
    of the rows are not the ones the planner lays out, or when the planner refuses them.
    """
    try:
        plan = make_plan(pair_spec(pair))
    except SpecError as error:
        raise RowsDisagree(f"the rows of {pair.name} are not a plan: {error}") from None
    targets = {
        target.label: target
        for target in Target.objects.filter(volume_group__array__pair=pair).select_related(
            "primary_server", "failover_server", "volume_group"
        )
    }
    _check_layout(pair, plan, targets)
    plan["targets"] = [
        {
            **entry,
            "primary": targets[entry["label"]].primary_server.hostname,
            "failover": targets[entry["label"]].failover_server.hostname,
            "device": targets[entry["label"]].device,
            "mountpoint": targets[entry["label"]].mount_point,
            "volume_group": targets[entry["label"]].volume_group.name,
        }
        for entry in plan["targets"]
    ]
    # In the JSON types a job hands on (and the record holds): lists, never tuples.
    return json.loads(json.dumps(plan))


def pair_spec(pair: ServerPair) -> dict:
    """The spec of ``pair`` as its rows hold it: what the planner was given when it was
    confirmed, with each server's values as they are now."""
    first_kind = TargetKind.OST if pair.kind == PairKind.OSS else TargetKind.MDT
    first_targets = list(
        Target.objects.filter(volume_group__array__pair=pair, kind=first_kind)
        .select_related("primary_server", "failover_server", "volume_group__array")
        .order_by("index")
    )
    if not first_targets:
        raise RowsDisagree(f"pair {pair.name} has no {first_kind} target in the inventory")
    first = first_targets[0]
    # The planner makes the first server primary of the MDTs and of the even-indexed OSTs.
    leading = (
        first.failover_server
        if first_kind == TargetKind.OST and first.index % 2
        else first.primary_server
    )
    servers = sorted(pair.servers.all(), key=lambda server: server.pk != leading.pk)
    # Arrays in the spec's order: the planner numbers targets array after array.
    array_order: dict[int, int] = {}
    for target in first_targets:
        array_order.setdefault(target.volume_group.array_id, target.index)
    arrays = sorted(
        pair.arrays.prefetch_related("enclosures__model"),
        key=lambda array: array_order.get(array.pk, 1 << 31),
    )
    group = VolumeGroup.objects.filter(array__pair=pair).order_by("name").first()
    spec: dict = {
        "filesystem": pair.filesystem.name,
        "ssu": pair.name,
        "role": pair.kind,
        "servers": [
            {
                "hostname": server.hostname,
                "nids": list(server.lnet_nids),
                "bmc": server.bmc_address,
                "pdu_outlet": server.pdu_outlet,
                **({"lnet_interface": server.lnet_interface} if server.lnet_interface else {}),
                **{
                    key: getattr(server, key)
                    for key in ("mgmt_address", "heartbeat_address")
                    if getattr(server, key)
                },
            }
            for server in servers
        ],
        "raid": group.raid if group else "",
        "segment_kib": group.segment_kib if group else 0,
        "first_ost_index" if first_kind == TargetKind.OST else "first_mdt_index": first.index,
        "arrays": [
            {
                "name": array.name,
                "controller": enclosures[0].model.name,
                "expansions": [enclosure.model.name for enclosure in enclosures[1:]],
                "drive_tb": _drive_tb(array),
                "drives": array.installed_drives,
                "global_spares": array.global_spares,
            }
            for array in arrays
            for enclosures in [sorted(array.enclosures.all(), key=lambda e: e.position)]
        ],
    }
    return spec


def _drive_tb(array: StorageArray) -> float:
    if array.drive_tb_as_given:
        return json.loads(array.drive_tb_as_given)
    size = array.drive_tb.normalize()
    return int(size) if size == size.to_integral_value() else float(size)


def _check_layout(pair: ServerPair, plan: dict, targets: dict[str, Target]) -> None:
    """Refuse to build from rows whose volume groups, drives or targets are not the planner's."""
    planned_groups = {
        group["name"]: (
            group["array"],
            group["raid"],
            group["segment_kib"],
            group["controller"],
            frozenset((d["enclosure"], d["drawer"], d["slot"]) for d in group["drives"]),
        )
        for group in plan["volume_groups"]
    }
    drives: dict[str, set] = {}
    for enclosure, drawer, slot, group in Drive.objects.filter(
        volume_group__array__pair=pair
    ).values_list("enclosure__name", "drawer", "slot", "volume_group__name"):
        drives.setdefault(group, set()).add((enclosure, drawer, slot))
    row_groups = {
        group.name: (
            group.array.name,
            group.raid,
            group.segment_kib,
            group.controller,
            frozenset(drives.get(group.name, ())),
        )
        for group in VolumeGroup.objects.filter(array__pair=pair).select_related("array")
    }
    if row_groups != planned_groups:
        differ = sorted(
            name
            for name in planned_groups.keys() | row_groups.keys()
            if planned_groups.get(name) != row_groups.get(name)
        )
        raise RowsDisagree(
            f"pair {pair.name}: the inventory's volume groups {', '.join(differ[:4])} are not "
            "the ones the planner lays out on these arrays; correct the rows before a run"
        )
    planned_targets = {t["label"]: (t["kind"], t["index"]) for t in plan["targets"]}
    row_targets = {label: (t.kind, t.index) for label, t in targets.items()}
    if row_targets != planned_targets:
        differ = sorted(planned_targets.keys() ^ row_targets.keys()) or sorted(planned_targets)
        raise RowsDisagree(
            f"pair {pair.name}: the inventory's targets ({', '.join(differ[:4])}) are not the "
            "ones the planner lays out on these volume groups; correct the rows before a run"
        )
