"""The JSON bodies of the SANtricity REST API, from the rack's arrays: the same drives, volume
groups, volumes and controllers that `SMcli` prints (simulator/commands/smcli.py), in the real
API's shapes and field names (/work/notes/issue-33-santricity-api.md is the contract).

SMcli's words map to the API's: a drive Optimal/Failed/Replaced/Missing is `status` optimal,
failed, replaced or removed; a hot spare is a drive with `hotSpare` true (in use: its
`sparedForDriveRef` names the drive it stands for); a volume group's health is its `raidStatus`
(optimal, degraded — SMcli's critical too —, failed); a reconstruction or a copyback is its
volumes' `action` (reconstructing, copyback) and the group's action-progress.
"""

from __future__ import annotations

from simulator.rebuilds import rebuild_seconds
from simulator.santricity import mel, refs, stats
from simulator.topology import controller_serving, drive_missing, volume_group_health

SYSTEM_ID = "1"
FIRMWARE = "08.52.00.00"
# SMcli's group states to the API's raidStatus (SANtricity has no word for "no redundancy left").
RAID_STATUS = {
    "optimal": "optimal",
    "degraded": "degraded",
    "critical": "degraded",
    "failed": "failed",
}
OPERATION_ACTIONS = {"reconstruction": "reconstructing", "copyback": "copyback"}


def about(array: dict, controller: str) -> dict:
    return {
        "runningAsProxy": False,
        "version": "11.52.0001.0001",
        "systemId": SYSTEM_ID,
        "controllerPosition": refs.CONTROLLER_SLOTS[controller],
    }


def needs_attention(array: dict) -> bool:
    if any(status != "optimal" for status in array["controllers"].values()):
        return True
    if any(e["drawers_offline"] for e in array["enclosures"]):
        return True
    for enclosure in array["enclosures"]:
        if any(d["state"] in ("failed", "replaced") for d in enclosure["drives"].values()):
            return True
    return any(
        volume_group_health(array, g)["state"] != "optimal" for g in array["volume_groups"].values()
    )


def storage_system(array: dict) -> dict:
    drives = [d for e in array["enclosures"] for d in e["drives"].values()]
    return {
        "id": SYSTEM_ID,
        "name": array["name"],
        "wwn": refs.wwn(array["name"]),
        "status": "needsAttn" if needs_attention(array) else "optimal",
        "model": array["model"],
        "driveCount": len(drives),
        "trayCount": len(array["enclosures"]),
        "hotSpareCount": sum(1 for d in drives if d["state"] in ("hot_spare", "spare_in_use")),
        "fwVersion": FIRMWARE,
        "chassisSerialNumber": "SV" + refs.wwn(array["name"])[-10:],
    }


def _location(array: dict, tray: int, drawer: int, slot: int, slots_per_drawer: int) -> dict:
    drawer_ref = refs.drawer_ref(array["name"], tray, drawer)
    return {
        "trayRef": refs.tray_ref(array["name"], tray),
        "slot": (drawer - 1) * slots_per_drawer + slot,
        "locationParent": {
            "refType": "genericTyped",
            "controllerRef": None,
            "symbolRef": drawer_ref,
            "typedReference": {"componentType": "drawer", "symbolRef": drawer_ref},
        },
        "locationPosition": slot,
        "label": str(slot),
    }


def _spared_for(array: dict, address: list[int], drive: dict) -> str:
    """The drive a hot spare in use stands for: the one it replaces once rebuilt, else the one
    its running reconstruction replaces."""
    if drive["state"] != "spare_in_use" and drive.get("previous") != "spare_in_use":
        return refs.NO_REF
    replaced = drive.get("replaces")
    if not replaced:
        group = array["volume_groups"].get(drive.get("vg") or "") or {}
        rebuild = group.get("rebuild") or {}
        if rebuild.get("spare") == address:
            replaced = rebuild["replacing"]
    return refs.drive_ref(array["name"], *replaced) if replaced else refs.NO_REF


def drive(array: dict, enclosure: dict, key: str) -> dict:
    tray = enclosure["tray"]
    drawer, slot = (int(x) for x in key.split(","))
    record = enclosure["drives"][key]
    state = record["state"]
    role = record.get("previous") if state == "failed" else state
    missing = drive_missing(array, tray, drawer)
    if state == "failed":
        status = "failed"
    elif missing:
        status = "removed"
    elif state == "replaced":
        status = "replaced"
    else:
        status = "optimal"
    ref = refs.drive_ref(array["name"], tray, drawer, slot)
    size = int(array["drive_tb"] * 1e12)
    group = record.get("vg")
    return {
        "id": ref,
        "driveRef": ref,
        "status": status,
        "offline": status == "failed",
        "removed": missing and state != "failed",
        "hotSpare": role in ("hot_spare", "spare_in_use"),
        "available": state == "unassigned" and not missing,
        "sparedForDriveRef": _spared_for(array, [tray, drawer, slot], record),
        "currentVolumeGroupRef": refs.group_ref(array["name"], group) if group else refs.NO_REF,
        "physicalLocation": _location(array, tray, drawer, slot, enclosure["slots_per_drawer"]),
        "rawCapacity": str(size),
        "usableCapacity": str(size - 512 * 2**20),
        "driveMediaType": "hdd",
        "phyDriveType": "sas",
        "locateInProgress": bool(record.get("locate")),
        "pfa": False,
    }


def drives(array: dict) -> list[dict]:
    out = []
    for enclosure in array["enclosures"]:
        for key in sorted(enclosure["drives"], key=lambda k: tuple(int(x) for x in k.split(","))):
            out.append(drive(array, enclosure, key))
    return out


def hardware_inventory(state: dict, array: dict) -> dict:
    trays, drawers = [], []
    for enclosure in array["enclosures"]:
        tray = enclosure["tray"]
        tray_ref = refs.tray_ref(array["name"], tray)
        trays.append(
            {
                "trayRef": tray_ref,
                "id": tray_ref,
                "trayId": tray,
                "type": enclosure["model"],
                "numDrawers": enclosure["drawers"],
                "numDriveSlots": enclosure["drawers"] * enclosure["slots_per_drawer"],
                "numDriveSlotsPerCompartment": enclosure["slots_per_drawer"],
            }
        )
        for number in range(1, enclosure["drawers"] + 1):
            ref = refs.drawer_ref(array["name"], tray, number)
            out = number in enclosure["drawers_offline"]
            drawers.append(
                {
                    "drawerRef": ref,
                    "id": ref,
                    "status": "removed" if out else "optimal",
                    "isOpen": out,
                    "physicalLocation": {
                        "trayRef": tray_ref,
                        "slot": number,
                        "locationPosition": number,
                        "label": str(number),
                    },
                }
            )
    return {
        "trays": trays,
        "drawers": drawers,
        "drives": drives(array),
        "controllers": controllers(state, array),
    }


def storage_pool(array: dict, name: str) -> dict:
    group = array["volume_groups"][name]
    health = volume_group_health(array, group)
    capacity = int(group["data_drives"] * array["drive_tb"] * 1e12)
    used = sum(v["capacity_bytes"] for v in array["volumes"].values() if v["vg"] == name)
    ref = refs.group_ref(array["name"], name)
    return {
        "id": ref,
        "volumeGroupRef": ref,
        "name": name,
        "label": name,
        "raidLevel": f"raid{group['raid']}",
        "raidStatus": RAID_STATUS[health["state"]],
        "state": "incomplete" if health["missing_drives"] else "complete",
        "offline": health["state"] == "failed",
        "diskPool": False,
        "totalRaidedSpace": str(capacity),
        "usedSpace": str(used),
        "freeSpace": str(capacity - used),
        "drawerLossProtection": False,
        "trayLossProtection": False,
        "driveMediaType": "hdd",
    }


def storage_pools(array: dict) -> list[dict]:
    return [storage_pool(array, name) for name in sorted(array["volume_groups"])]


def group_by_ref(array: dict, ref: str) -> str | None:
    for name in array["volume_groups"]:
        if ref in (name, refs.group_ref(array["name"], name)):
            return name
    return None


def action_progress(state: dict, array: dict, name: str) -> list[dict]:
    """One entry per volume of a group with a reconstruction or copyback running."""
    group = array["volume_groups"][name]
    health = volume_group_health(array, group)
    if not health["operation"]:
        return []
    operation = group.get("rebuild") or group.get("copyback")
    seconds = rebuild_seconds(state, array)
    elapsed = operation.get("elapsed", operation["progress"] * seconds / 100)
    return [
        {
            "volumeRef": refs.volume_ref(array["name"], volume),
            "currentAction": OPERATION_ACTIONS[health["operation"]],
            "progressPercentage": int(health["progress"]),
            "estimatedTimeToCompletion": int(max(0.0, seconds - elapsed)),
        }
        for volume in sorted(array["volumes"])
        if array["volumes"][volume]["vg"] == name
    ]


def long_lived_ops(state: dict, array: dict) -> dict:
    """symbol/getLongLivedOpsProgress: one entry per group with an operation."""
    entries = []
    for name in sorted(array["volume_groups"]):
        for item in action_progress(state, array, name)[:1]:
            key = "reconstruct" if item["currentAction"] == "reconstructing" else "copyback"
            entries.append(
                {
                    "volAction": item["currentAction"],
                    key: {
                        "volumeGroupRef": refs.group_ref(array["name"], name),
                        "groupPercentComplete": item["progressPercentage"],
                        "groupTimeToCompletion": item["estimatedTimeToCompletion"] // 60,
                        "volumeRef": item["volumeRef"],
                        "volumePercentComplete": item["progressPercentage"],
                        "volumeTimeToCompletion": item["estimatedTimeToCompletion"] // 60,
                    },
                }
            )
    return {"returnCode": "ok", "longLivedOpsProgress": entries}


def volumes(array: dict) -> list[dict]:
    out = []
    for name, volume in sorted(array["volumes"].items()):
        group = array["volume_groups"].get(volume["vg"])
        health = volume_group_health(array, group) if group else {"state": "failed"}
        owner = controller_serving(array, volume) or volume["owner"]
        ref = refs.volume_ref(array["name"], name)
        wwn = refs.wwn(array["name"]) + ref[-8:]
        out.append(
            {
                "id": ref,
                "volumeRef": ref,
                "name": name,
                "label": name,
                "volumeGroupRef": refs.group_ref(array["name"], volume["vg"]),
                "status": RAID_STATUS[health["state"]],
                "action": OPERATION_ACTIONS.get(health.get("operation"), "none"),
                "raidLevel": f"raid{group['raid']}" if group else "raidUnsupported",
                "capacity": str(volume["capacity_bytes"]),
                "segmentSize": volume["segment_kib"] * 1024,
                "currentManager": refs.CONTROLLER_REFS[owner],
                "preferredManager": refs.CONTROLLER_REFS[volume["owner"]],
                "currentControllerId": refs.CONTROLLER_REFS[owner],
                "preferredControllerId": refs.CONTROLLER_REFS[volume["owner"]],
                "wwn": wwn,
                "worldWideName": wwn,
                "mapped": True,
                "offline": health["state"] == "failed",
                "diskPool": False,
            }
        )
    return out


def controllers(state: dict, array: dict) -> list[dict]:
    out = []
    servers = stats.host_ports(state, array)
    for name in ("A", "B"):
        status = array["controllers"][name]
        ref = refs.CONTROLLER_REFS[name]
        out.append(
            {
                "id": ref,
                "controllerRef": ref,
                "status": status,
                "active": status == "optimal",
                "physicalLocation": {
                    "trayRef": refs.tray_ref(array["name"], 0),
                    "slot": refs.CONTROLLER_SLOTS[name],
                    "locationPosition": refs.CONTROLLER_SLOTS[name],
                    "label": name,
                },
                "modelName": array["model"],
                "serialNumber": f"SX{refs.wwn(array['name'])[-8:]}{name}",
                "appVersion": FIRMWARE,
                "hostInterfaces": [
                    host_interface(array, name, channel) for channel in range(1, len(servers) + 1)
                ],
            }
        )
    return out


def host_interface(array: dict, controller: str, channel: int) -> dict:
    """One SAS host port of a controller as the inventory lists it: the interface statistics
    name it only by ``interfaceId`` (this ``interfaceRef``), so this is where a port's
    controller and channel are found."""
    up = array["controllers"][controller] == "optimal"
    return {
        "interfaceType": "sas",
        "sas": {
            "interfaceRef": refs.interface_ref(array["name"], controller, channel),
            "channel": channel,
            "controllerId": refs.CONTROLLER_REFS[controller],
            "currentInterfaceSpeed": "speed12gig" if up else "speedUnknown",
            "maximumInterfaceSpeed": "speed12gig",
            "isDegraded": False,
            "part": "LSISAS3008",
        },
    }


def failures(array: dict) -> list[dict]:
    """The Recovery Guru's list: what needs attention, one entry per object."""
    out = []

    def add(kind: str, ref: str, object_type: str) -> None:
        out.append(
            {
                "failureType": kind,
                "objectRef": ref,
                "objectType": object_type,
                "objectData": None,
                "extraData": None,
            }
        )

    for name in ("A", "B"):
        if array["controllers"][name] != "optimal":
            add("offlineController", refs.CONTROLLER_REFS[name], "controller")
    for enclosure in array["enclosures"]:
        for number in enclosure["drawers_offline"]:
            add(
                "removedDrawer", refs.drawer_ref(array["name"], enclosure["tray"], number), "drawer"
            )
        for key, record in sorted(enclosure["drives"].items()):
            drawer, slot = (int(x) for x in key.split(","))
            ref = refs.drive_ref(array["name"], enclosure["tray"], drawer, slot)
            if record["state"] == "failed":
                add("failedDrive", ref, "drive")
            elif record["state"] == "spare_in_use":
                add("hotSpareInUse", ref, "drive")
    for name, group in sorted(array["volume_groups"].items()):
        health = volume_group_health(array, group)["state"]
        if health != "optimal":
            kind = "failedVolumeGroup" if health == "failed" else "degradedVolumeGroup"
            add(kind, refs.group_ref(array["name"], name), "volumeGroup")
    return out


def mel_events(array: dict, start: int | None, count: int | None, critical: bool) -> list[dict]:
    out = []
    for sequence, when, code, ident, location in mel.events(array, start, count):
        category, priority, is_critical, component, description = mel.EVENTS[code]
        if critical and not is_critical:
            continue
        component_location: dict = {"eventComponentType": component}
        if component == "drive":
            tray, drawer, slot = (int(x) for x in ident.split(","))
            enclosure = array["enclosures"][tray]
            tray_slot = (drawer - 1) * enclosure["slots_per_drawer"] + slot
            component_location["driveLoc"] = {"tray": tray, "slot": tray_slot}
        elif component == "controller":
            component_location["controllerLoc"] = {"tray": 0, "slot": refs.CONTROLLER_SLOTS[ident]}
        elif component == "volumeGrp":
            component_location["label"] = ident
            names = sorted(array["volume_groups"])
            component_location["groupNumber"] = names.index(ident) if ident in names else 0
        elif component == "drawer":
            tray, number = (int(x) for x in ident.split(","))
            component_location["drawerLocation"] = {"tray": tray, "slot": number}
        out.append(
            {
                "sequenceNumber": str(sequence),
                "id": str(sequence),
                "eventType": code,
                "timeStamp": str(int(when)),
                "category": category,
                "priority": priority,
                "critical": is_critical,
                "componentType": component,
                "componentLocation": component_location,
                "locationValid": True,
                "location": location,
                "description": description,
                # A controller's failure is logged by its partner (0 = A, 1 = B).
                "eventSourceController": 1 if component == "controller" and ident == "A" else 0,
                "senseKey": 0,
                "asc": 0,
                "ascq": 0,
            }
        )
    return out


ANALYSED = {
    "analysed-volume-statistics": lambda state, array: stats.volume_statistics(array),
    "analysed-drive-statistics": lambda state, array: stats.drive_statistics(array),
    "analysed-controller-statistics": lambda state, array: stats.controller_statistics(array),
    "analysed-interface-statistics": stats.interface_statistics,
}
