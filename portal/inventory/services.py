"""Saving a plan into the inventory, and the checks that need the inventory to decide.

The planner checks a spec on its own (names, models, drive counts); this module adds what only
the rack's current state can tell: an OST index already taken, a server already in a pair, a
name already used. Both report in the same shape (``SpecError`` with field paths), and nothing
is written unless everything passes.
"""

from __future__ import annotations

import json
import os
import re
import sys
from decimal import Decimal
from pathlib import Path

from django.db import transaction

from portal.inventory.choices import (
    DriveState,
    EnclosureKind,
    PairKind,
    ServerRole,
    TargetKind,
    TargetState,
    VolumeGroupState,
)
from portal.inventory.models import (
    SSU,
    Drive,
    Enclosure,
    EnclosureModel,
    Filesystem,
    Server,
    ServerPair,
    StorageArray,
    Target,
    VolumeGroup,
    server_claims,
)
from provisioning import names
from provisioning.ha.plan import HAConfigError, read_plan
from provisioning.planner import MODELS, SpecError, make_plan


def same_bmc_credentials(documents: list, user: str, password: str) -> dict:
    """The commands' one BMC user and password for every server their spec files name."""
    return {
        server.get("hostname"): (user, password)
        for document in documents
        if isinstance(document, dict) and isinstance(document.get("servers"), list)
        for server in document["servers"]
        if isinstance(server, dict)
    }


def plan_for_inventory(spec: dict) -> dict:
    """Plan a spec and check it against the inventory; raise ``SpecError`` naming each field."""
    plan = make_plan(spec)
    try:
        read_plan(plan)  # what the Pacemaker builders will refuse, refused now, at its field
    except HAConfigError as error:
        raise SpecError({error.field.removeprefix("plan."): error.message}) from None
    errors = inventory_conflicts(plan)
    if errors:
        raise SpecError(errors)
    return plan


def inventory_conflicts(plan: dict) -> dict[str, str]:
    errors: dict[str, str] = {}
    fs_name = plan["filesystem"]
    filesystem = Filesystem.objects.filter(name=fs_name).first()
    if plan["role"] == PairKind.MDS:
        if filesystem is not None:
            errors["filesystem"] = (
                f"filesystem {fs_name!r} exists already with its MDS pair; "
                "add OSS pairs (SSUs) to it instead"
            )
    elif filesystem is None:
        errors["filesystem"] = (
            f"there is no filesystem {fs_name!r} yet: add its MDS pair first, which creates it"
        )

    if ServerPair.objects.filter(name=plan["ssu"]).exists():
        errors["ssu"] = f"a pair or SSU named {plan['ssu']!r} exists already"

    for position, claims in enumerate(server_claims(plan["servers"])):
        for field, message in claims.items():
            errors[f"servers[{position}].{field}"] = message

    for position, array in enumerate(plan["arrays"]):
        if StorageArray.objects.filter(name=array["name"]).exists():
            errors[f"arrays[{position}].name"] = f"an array named {array['name']!r} exists already"

    if filesystem is not None:
        for kind, field in (
            (TargetKind.OST, "first_ost_index"),
            (TargetKind.MDT, "first_mdt_index"),
        ):
            wanted = [t["index"] for t in plan["targets"] if t["kind"] == kind]
            taken = sorted(
                filesystem.targets.filter(kind=kind, index__in=wanted).values_list(
                    "index", flat=True
                )
            )
            if taken:
                labels = ", ".join(f"{fs_name}-{kind}{index:04x}" for index in taken[:4])
                more = f" and {len(taken) - 4} more" if len(taken) > 4 else ""
                hint = (
                    f"; the next free OST index is {filesystem.next_ost_index()}"
                    if kind == TargetKind.OST
                    else ""
                )
                errors[field] = f"{kind} indices clash with existing targets {labels}{more}{hint}"
    return errors


def sync_catalogue() -> dict[str, EnclosureModel]:
    """Copy the planner's enclosure catalogue into the database (one row per model)."""
    rows = {}
    for model in MODELS.values():
        row, _ = EnclosureModel.objects.update_or_create(
            name=model.name,
            defaults={
                "kind": EnclosureKind.CONTROLLER
                if model.is_controller
                else EnclosureKind.EXPANSION,
                "drawers": model.drawers,
                "slots_per_drawer": model.slots_per_drawer,
                "controllers": "".join(model.controllers),
                "description": model.description,
            },
        )
        rows[model.name] = row
    return rows


class _Preview(Exception):
    """Raised inside the preview's transaction to roll it back."""


def save_plans(
    specs: list[dict], bmc_credentials: dict[str, tuple[str, str]] | None = None
) -> list[ServerPair]:
    """Save several specs in one transaction (an MDS pair and its first SSU): all or nothing.

    Each spec is checked against the inventory as the earlier ones left it, so the SSU sees
    the filesystem its MDS pair creates. A ``SpecError`` names the spec by its position:
    ``specs[1].servers[0].hostname``.
    """
    with transaction.atomic():
        pairs = []
        for position, spec in enumerate(specs):
            try:
                pairs.append(save_plan(spec, bmc_credentials))
            except SpecError as error:
                if len(specs) == 1:
                    raise
                raise SpecError(
                    {f"specs[{position}].{field}": msg for field, msg in error.errors.items()}
                ) from None
        return pairs


def preview_plans(specs: list[dict]) -> list[dict]:
    """The plans ``save_plans`` would save, with every check it would make, saving nothing."""
    plans: list[dict] = []
    try:
        with transaction.atomic():
            plans = [pair.plan for pair in save_plans(specs)]
            raise _Preview
    except _Preview:
        pass
    return plans


@transaction.atomic
def save_plan(spec: dict, bmc_credentials: dict[str, tuple[str, str]] | None = None) -> ServerPair:
    """Plan ``spec``, check it against the inventory, and create every row of it at once.

    ``bmc_credentials`` maps a hostname to (user, password); the password is stored encrypted.
    Returns the new server pair (its ``ssu`` exists for OSS pairs).
    """
    plan = plan_for_inventory(spec)
    bmc_credentials = bmc_credentials or {}
    for index, entry in enumerate(plan["servers"]):
        user, password = bmc_credentials.get(entry["hostname"], ("", ""))
        if user and (problem := names.fence_user_problem(user)):
            raise SpecError({f"servers[{index}].bmc_user": problem})
        if password and (problem := names.fence_password_problem(password)):
            raise SpecError({f"servers[{index}].bmc_password": problem})
    catalogue = sync_catalogue()

    if plan["role"] == PairKind.MDS:
        filesystem = Filesystem(
            name=plan["filesystem"], mgs_nids=[server["nids"][0] for server in plan["servers"]]
        )
        filesystem.full_clean()
        filesystem.save()
    else:
        filesystem = Filesystem.objects.select_for_update().get(name=plan["filesystem"])

    pair = ServerPair(name=plan["ssu"], kind=plan["role"], filesystem=filesystem, plan=plan)
    pair.full_clean()
    pair.save()

    servers: dict[str, Server] = {}
    for entry in plan["servers"]:
        user, password = bmc_credentials.get(entry["hostname"], ("", ""))
        server = Server(
            hostname=entry["hostname"],
            role=ServerRole.MDS if plan["role"] == PairKind.MDS else ServerRole.OSS,
            pair=pair,
            lnet_nids=entry["nids"],
            bmc_address=entry["bmc"],
            bmc_username=user,
            pdu_outlet=entry["pdu_outlet"],
            lnet_interface=entry.get("lnet_interface", ""),
        )
        server.set_bmc_password(password)
        # Everything ``Server.clean`` checks was checked above, once: each value's shape by the
        # planner (the fence user here), the claims against the spec's and the inventory's
        # servers by ``inventory_conflicts`` in this transaction. The fields are checked still.
        server.clean_fields()
        server.validate_unique()
        server.validate_constraints()
        server.save()
        servers[server.hostname] = server

    enclosures: dict[str, Enclosure] = {}
    for array_entry in plan["arrays"]:
        array = StorageArray(
            name=array_entry["name"],
            pair=pair,
            drive_tb=Decimal(str(array_entry["drive_tb"])),
            drive_tb_as_given=json.dumps(array_entry["drive_tb"]),
            installed_drives=array_entry["drives"],
            global_spares=array_entry["global_spares"],
        )
        array.full_clean()
        array.save()
        for position, enclosure_entry in enumerate(array_entry["enclosures"]):
            enclosure = Enclosure.objects.create(
                array=array,
                model=catalogue[enclosure_entry["model"]],
                name=enclosure_entry["id"],
                position=position,
            )
            enclosures[enclosure.name] = enclosure
            Drive.objects.bulk_create(
                Drive(enclosure=enclosure, drawer=drawer, slot=slot, size_tb=array.drive_tb)
                for drawer in range(1, enclosure_entry["drawers"] + 1)
                for slot in range(1, enclosure_entry["slots_per_drawer"] + 1)
            )

    arrays = {array.name: array for array in pair.arrays.all()}
    volume_groups: dict[str, VolumeGroup] = {}
    for group_entry in plan["volume_groups"]:
        group = VolumeGroup.objects.create(
            array=arrays[group_entry["array"]],
            name=group_entry["name"],
            raid=group_entry["raid"],
            segment_kib=group_entry["segment_kib"],
            controller=group_entry["controller"],
        )
        volume_groups[group.name] = group
        _mark_drives(enclosures, group_entry["drives"], state=DriveState.ASSIGNED, group=group)
    _mark_drives(enclosures, plan["spares"], state=DriveState.SPARE, group=None)

    for target_entry in plan["targets"]:
        target = Target(
            filesystem=filesystem,
            kind=target_entry["kind"],
            index=target_entry["index"],
            label=target_entry["label"],
            volume_group=volume_groups[target_entry["volume_group"]],
            primary_server=servers[target_entry["primary"]],
            failover_server=servers[target_entry["failover"]],
            device=target_entry["device"],
            mount_point=target_entry["mountpoint"],
        )
        target.full_clean()
        target.save()

    if plan["role"] == PairKind.OSS:
        SSU.objects.create(name=plan["ssu"], filesystem=filesystem, pair=pair)
    return pair


def _mark_drives(
    enclosures: dict[str, Enclosure], slots: list[dict], state: str, group: VolumeGroup | None
) -> None:
    for slot in slots:
        updated = Drive.objects.filter(
            enclosure=enclosures[slot["enclosure"]],
            drawer=slot["drawer"],
            slot=slot["slot"],
        ).update(state=state, volume_group=group)
        if updated != 1:  # the planner never hands out a slot twice; a second use is a bug
            raise RuntimeError(f"plan names a missing or reused slot {slot}")


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


def ansible_inventory(pairs: list[ServerPair], virtual_rack: Path | None = None) -> dict:
    """The ansible inventory of these pairs, in ansible's JSON form.

    On the virtual rack each server is a local host whose commands come first on PATH from its
    own ``bin/`` and whose files live under its root directory; on real servers the same
    playbooks run over SSH with ``ostara_root`` empty. Nothing else differs.
    """
    hostvars: dict[str, dict] = {}
    groups: dict[str, dict] = {"mds": {"hosts": {}}, "oss": {"hosts": {}}}
    for pair in pairs:
        servers = list(pair.servers.order_by("hostname"))
        # Pair groups get a prefix: an MDS pair is often named like its first server.
        groups[f"pair_{pair.name}"] = {"hosts": {server.hostname: {} for server in servers}}
        for server in servers:
            partner_server = next(s for s in servers if s.pk != server.pk)
            partner = partner_server.hostname
            host = {
                "ostara_pair": pair.name,
                "ostara_pair_group": f"pair_{pair.name}",
                "ostara_role": pair.kind,
                "ostara_fsname": pair.filesystem.name,
                "ostara_partner": partner,
                "ostara_nids": server.lnet_nids,
                # The sensor polls its partner's chassis power (sensors.redundancy).
                "ostara_partner_nids": partner_server.lnet_nids,
                "ostara_partner_bmc": partner_server.bmc_address,
                "ostara_partner_bmc_user": partner_server.bmc_username,
            }
            if virtual_rack is not None:
                root = virtual_rack / "hosts" / server.hostname
                host.update(
                    {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "ostara_root": str(root),
                        "ostara_env": {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}"},
                    }
                )
            else:
                host.update(
                    {
                        "ansible_host": server.hostname,
                        "ansible_user": "root",
                        "ostara_root": "",
                        "ostara_env": {},
                    }
                )
            hostvars[server.hostname] = host
            groups[pair.kind]["hosts"][server.hostname] = {}
    return {"all": {"hosts": hostvars, "children": groups}}


# --- what the rack reports --------------------------------------------------------------

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
        if drive.volume_group_id is not None:
            return DriveState.OPTIMAL
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
