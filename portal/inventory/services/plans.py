"""Saving a plan into the inventory, and the checks that need the inventory to decide.

The planner checks a spec on its own (names, models, drive counts); this module adds what only
the rack's current state can tell: an OST index already taken, a server already in a pair, a
name already used. Both report in the same shape (``SpecError`` with field paths), and nothing
is written unless everything passes.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.db import transaction

from portal.inventory.choices import (
    DriveState,
    EnclosureKind,
    PairKind,
    ServerRole,
    TargetKind,
)
from portal.inventory.models import (
    MONITOR_USER,
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


def _same_credentials(documents: list, items: str, name: str, account: tuple) -> dict:
    """One account for every item (`servers` by `hostname`, `arrays` by `name`) that the
    commands' spec files name; what is not a spec's shape is left to the planner to refuse."""
    return {
        item.get(name): account
        for document in documents
        if isinstance(document, dict) and isinstance(document.get(items), list)
        for item in document[items]
        if isinstance(item, dict)
    }


def same_bmc_credentials(documents: list, user: str, password: str) -> dict:
    """The commands' one BMC user and password for every server their spec files name."""
    return _same_credentials(documents, "servers", "hostname", (user, password))


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


def same_monitor_credentials(documents: list, user: str, password: str) -> dict:
    """The commands' one monitor account for every array their spec files name."""
    return _same_credentials(documents, "arrays", "name", (user, password))


def save_plans(
    specs: list[dict],
    bmc_credentials: dict[str, tuple[str, str]] | None = None,
    monitor_credentials: dict[str, tuple[str, str]] | None = None,
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
                pairs.append(save_plan(spec, bmc_credentials, monitor_credentials))
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
def save_plan(
    spec: dict,
    bmc_credentials: dict[str, tuple[str, str]] | None = None,
    monitor_credentials: dict[str, tuple[str, str]] | None = None,
) -> ServerPair:
    """Plan ``spec``, check it against the inventory, and create every row of it at once.

    ``bmc_credentials`` maps a hostname to (user, password); the password is stored encrypted.
    ``monitor_credentials`` maps an array to its monitor account (user, password), stored the
    same way; the spec's ``arrays[i].management`` gives its controllers' addresses.
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
            mgmt_address=entry.get("mgmt_address", ""),
            heartbeat_address=entry.get("heartbeat_address", ""),
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

    # The planner checked each address; the plan does not carry them (the rows do).
    management = {
        entry["name"]: entry["management"]
        for entry in spec.get("arrays", [])
        if isinstance(entry, dict) and "management" in entry
    }
    monitor_credentials = monitor_credentials or {}
    enclosures: dict[str, Enclosure] = {}
    for index, array_entry in enumerate(plan["arrays"]):
        addresses = management.get(array_entry["name"], ["", ""])
        user, password = monitor_credentials.get(array_entry["name"], ("", ""))
        if user and (problem := names.monitor_user_problem(user)):
            raise SpecError({f"arrays[{index}].monitor_user": problem})
        if password and (problem := names.monitor_password_problem(password)):
            raise SpecError({f"arrays[{index}].monitor_password": problem})
        array = StorageArray(
            name=array_entry["name"],
            pair=pair,
            drive_tb=Decimal(str(array_entry["drive_tb"])),
            drive_tb_as_given=json.dumps(array_entry["drive_tb"]),
            installed_drives=array_entry["drives"],
            global_spares=array_entry["global_spares"],
            management_a=addresses[0],
            management_b=addresses[1],
            monitor_user=user or MONITOR_USER,
        )
        array.set_monitor_password(password)
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
