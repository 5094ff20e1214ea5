"""What the virtual commands do to the rack, as plain functions on the state.

The command modules (`simulator.commands.*`) parse arguments and print like the real tools;
the changes themselves live here so that tests and the fast provisioning path
(`simulator.provision`) make exactly the same changes without spawning processes. Errors are
`OperationError`s carrying the errno the real tool would report.
"""

from __future__ import annotations

import errno as errno_codes

from simulator import topology, tunables
from simulator.state import RackError
from simulator.topology import (
    FORMAT_EFFICIENCY,
    MDT_BYTES_PER_INODE,
    OST_BYTES_PER_INODE,
    data_drives,
    drive_at,
    find_volume,
    host_sees_volume,
    target_health,
    touch,
)

MIN_WIDTH = {"0": 1, "1": 2, "3": 3, "5": 3, "6": 5}


class OperationError(RackError):
    def __init__(self, message: str, errno: int = errno_codes.EINVAL):
        super().__init__(message)
        self.errno = errno


# ---------------------------------------------------------------------------------------------
# arrays


def array_by_name(state: dict, name: str) -> dict:
    array = state["arrays"].get(name)
    if array is None:
        raise OperationError(f"no storage array named {name}", errno_codes.ENOENT)
    return array


def create_volume_group(
    state: dict, array_name: str, drives: list[tuple[int, int, int]], raid_level: str, label: str
) -> dict:
    array = array_by_name(state, array_name)
    if label in array["volume_groups"]:
        raise OperationError(f'volume group "{label}" already exists', errno_codes.EEXIST)
    if raid_level not in MIN_WIDTH:
        raise OperationError(f"invalid RAID level {raid_level}")
    if len(drives) < MIN_WIDTH[raid_level] or (raid_level == "1" and len(drives) % 2):
        raise OperationError(f"RAID {raid_level} cannot be built from {len(drives)} drives")
    if len(set(drives)) != len(drives):
        raise OperationError("a drive is listed twice")
    for tray, drawer, slot in drives:
        drive = drive_at(array, tray, drawer, slot)
        if drive is None:
            raise OperationError(
                f"no drive at tray {tray}, drawer {drawer}, slot {slot}", errno_codes.ENOENT
            )
        if drive["state"] != "unassigned":
            raise OperationError(
                f"drive at tray {tray}, drawer {drawer}, slot {slot} is not unassigned "
                f"({drive['state']})",
                errno_codes.EBUSY,
            )
    for tray, drawer, slot in drives:
        drive = drive_at(array, tray, drawer, slot)
        drive["state"] = "assigned"
        drive["vg"] = label
    group = {
        "name": label,
        "raid": raid_level,
        "width": len(drives),
        "data_drives": data_drives(raid_level, len(drives)),
        "drives": [list(d) for d in drives],
        "rebuild": None,
    }
    array["volume_groups"][label] = group
    touch(array)
    return group


def create_volume(
    state: dict,
    array_name: str,
    group_name: str,
    label: str,
    *,
    capacity_bytes: int | None = None,
    segment_kib: int = 128,
    owner: str | None = None,
) -> dict:
    array = array_by_name(state, array_name)
    group = array["volume_groups"].get(group_name)
    if group is None:
        raise OperationError(f'no volume group "{group_name}"', errno_codes.ENOENT)
    if find_volume(state, label):
        raise OperationError(f'volume "{label}" already exists', errno_codes.EEXIST)
    if segment_kib not in (8, 16, 32, 64, 128, 256, 512):
        raise OperationError(f"invalid segment size {segment_kib}")
    free = group_free_bytes(array, group)
    if capacity_bytes is None:
        capacity_bytes = free
    if capacity_bytes <= 0 or capacity_bytes > free:
        raise OperationError(
            f'not enough free capacity in volume group "{group_name}"', errno_codes.ENOSPC
        )
    if owner is None:
        owned = [v["owner"] for v in array["volumes"].values()]
        owner = "A" if owned.count("A") <= owned.count("B") else "B"
    volume = {
        "name": label,
        "vg": group_name,
        "capacity_bytes": int(capacity_bytes),
        "segment_kib": segment_kib,
        "owner": owner.upper(),
    }
    array["volumes"][label] = volume
    touch(array)
    return volume


def group_capacity_bytes(array: dict, group: dict) -> int:
    return int(group["data_drives"] * array["drive_tb"] * 1e12)


def group_free_bytes(array: dict, group: dict) -> int:
    used = sum(v["capacity_bytes"] for v in array["volumes"].values() if v["vg"] == group["name"])
    return group_capacity_bytes(array, group) - used


def delete_volume(state: dict, array_name: str, label: str) -> None:
    array = array_by_name(state, array_name)
    if label not in array["volumes"]:
        raise OperationError(f'no volume "{label}"', errno_codes.ENOENT)
    for target in state["targets"].values():
        if target["volume"] == label and target.get("mounted_on"):
            raise OperationError(f'volume "{label}" is in use', errno_codes.EBUSY)
    del array["volumes"][label]
    touch(array)
    for label_, target in list(state["targets"].items()):
        if target["volume"] == label:
            del state["targets"][label_]


def delete_volume_group(state: dict, array_name: str, group_name: str) -> None:
    array = array_by_name(state, array_name)
    group = array["volume_groups"].get(group_name)
    if group is None:
        raise OperationError(f'no volume group "{group_name}"', errno_codes.ENOENT)
    if any(v["vg"] == group_name for v in array["volumes"].values()):
        raise OperationError(f'volume group "{group_name}" still has volumes', errno_codes.EBUSY)
    for tray, drawer, slot in group["drives"]:
        drive = drive_at(array, tray, drawer, slot)
        if drive and drive["vg"] == group_name:
            drive["vg"] = None
            if drive["state"] == "assigned":
                drive["state"] = "unassigned"
    del array["volume_groups"][group_name]
    touch(array)


def set_hot_spare(state: dict, array_name: str, address: tuple[int, int, int], on: bool) -> None:
    array = array_by_name(state, array_name)
    drive = drive_at(array, *address)
    if drive is None:
        raise OperationError("no such drive", errno_codes.ENOENT)
    touch(array)
    if on:
        if drive["state"] != "unassigned":
            raise OperationError("drive is not unassigned", errno_codes.EBUSY)
        drive["state"] = "hot_spare"
    else:
        if drive["state"] != "hot_spare":
            raise OperationError("drive is not a hot spare")
        drive["state"] = "unassigned"


# ---------------------------------------------------------------------------------------------
# Lustre targets


def device_volume(state: dict, host: str, device: str) -> str:
    """/dev/mapper/<volume> (or /dev/<volume>) as seen from `host`: the volume's name."""
    name = device.rsplit("/", 1)[-1]
    if not host_sees_volume(state, host, name):
        raise OperationError(f"{device}: No such file or directory", errno_codes.ENOENT)
    return name


def format_target(
    state: dict,
    host: str,
    device: str,
    *,
    kind: str,
    fsname: str | None,
    index: int | None,
    mgsnodes: list[str],
    servicenodes: list[str],
    reformat: bool,
    now: float,
    params: dict[str, str] | None = None,
) -> dict:
    """mkfs.lustre: write the Lustre label and configuration onto a volume."""
    volume_name = device_volume(state, host, device)
    array, volume = find_volume(state, volume_name)
    existing = [t for t in state["targets"].values() if t["volume"] == volume_name]
    if existing and existing[0].get("mounted_on"):
        raise OperationError(
            f"{device} is mounted on {existing[0]['mounted_on']}", errno_codes.EBUSY
        )
    if existing and not reformat:
        raise OperationError(
            f"{device} already formatted as {existing[0]['label']}; use --reformat",
            errno_codes.EEXIST,
        )
    group = array["volume_groups"][volume["vg"]]
    if topology.volume_group_health(array, group)["state"] == "failed":
        raise OperationError(f"{device}: Input/output error", errno_codes.EIO)
    if kind == "MGT":
        label = "MGS"
    else:
        if not fsname or index is None:
            raise OperationError("must specify --fsname and --index for an OST or MDT")
        label = f"{fsname}-{kind}{index:04x}"
    clash = state["targets"].get(label)
    if clash and clash["volume"] != volume_name:
        raise OperationError(
            f"{label} is already formatted on {clash['device']}", errno_codes.EEXIST
        )
    for target in existing:
        del state["targets"][target["label"]]
    total_kib = int(volume["capacity_bytes"] * FORMAT_EFFICIENCY / 1024)
    per_inode = OST_BYTES_PER_INODE if kind == "OST" else MDT_BYTES_PER_INODE
    files_total = max(1024, total_kib * 1024 // per_inode)
    target = {
        "label": label,
        "kind": kind,
        "fsname": fsname if kind != "MGT" else None,
        "index": index if kind != "MGT" else 0,
        "volume": volume_name,
        "array": array["name"],
        "device": f"/dev/mapper/{volume_name}",
        "mgsnodes": list(mgsnodes),
        "servicenodes": list(servicenodes),
        "params": dict(params or {}),
        "formatted_at": now,
        "mounted_on": None,
        "mountpoint": None,
        "mounted_at": None,
        "mount_count": 0,
        "total_kib": total_kib,
        "used_kib": 1024 * (64 if kind == "OST" else 256),
        "files_total": files_total,
        "files_used": 300 if kind == "OST" else 500,
        "transno": 4294967296,
    }
    state["targets"][label] = target
    return target


def target_on_device(state: dict, host: str, device: str) -> dict:
    volume_name = device_volume(state, host, device)
    for target in state["targets"].values():
        if target["volume"] == volume_name:
            return target
    raise OperationError(
        f"{device} has not been formatted with mkfs.lustre or the backend filesystem type is "
        "not supported by this tool",
        errno_codes.ENODEV,
    )


def mount_target(state: dict, host: str, device: str, mountpoint: str, now: float) -> dict:
    """mount -t lustre: start a target on `host` (checks what mount.lustre would hit)."""
    server = state["servers"][host]
    target = target_on_device(state, host, device)
    if target.get("mounted_on") == host:
        raise OperationError(
            f"according to /etc/mtab {target['device']} is already mounted on "
            f"{target['mountpoint']}",
            errno_codes.EEXIST,
        )
    if target.get("mounted_on"):
        # ldiskfs multiple-mount protection: the other server holds it.
        raise OperationError(
            f"mount {device} at {mountpoint} failed: Device or resource busy", errno_codes.EBUSY
        )
    if target_health(state, target) == "failed":
        raise OperationError(
            f"mount {device} at {mountpoint} failed: Input/output error", errno_codes.EIO
        )
    if target["kind"] != "MGT":
        mgs_here = state["targets"].get("MGS", {}).get("mounted_on") == host
        if not (topology.lnet_reachable(state, host) or mgs_here) or not (
            topology.mgs_available(state) or mgs_here
        ):
            raise OperationError(
                f"mount {device} at {mountpoint} failed: Input/output error\nIs the MGS running?",
                errno_codes.EIO,
            )
    target["mounted_on"] = host
    target["mountpoint"] = mountpoint
    target["mounted_at"] = now
    target["mount_count"] = target.get("mount_count", 0) + 1
    server["mounts"][target["label"]] = {"device": target["device"], "mountpoint": mountpoint}
    # The target's MGC reads the MGS's params log: every `lctl set_param -P` is set again on
    # this server, over the new target's defaults (and over values set by hand).
    tunables.apply_config_log(state, host)
    return target


def umount_target(state: dict, host: str, what: str) -> dict:
    server = state["servers"][host]
    for label, mount in server["mounts"].items():
        if what in (mount["mountpoint"], mount["device"], mount["mountpoint"].rstrip("/")):
            target = state["targets"][label]
            release_target(state, target)
            return target
    raise OperationError(f"{what}: not mounted.", errno_codes.EINVAL)


def release_target(state: dict, target: dict) -> None:
    """The target stops on its server (umount, crash, power off)."""
    host = target.get("mounted_on")
    if host:
        tunables.forget_target_params(state, target)  # its tunables start again at the next mount
        state["servers"][host]["mounts"].pop(target["label"], None)
    target["mounted_on"] = None
    target["mountpoint"] = None


def power_off(state: dict, host: str) -> None:
    """The server stops at once: its targets go down with it."""
    server = state["servers"][host]
    for label in list(server["mounts"]):
        release_target(state, state["targets"][label])
    server["power"] = "off"
    server["state"] = "off"


def power_on(state: dict, host: str, now: float) -> None:
    server = state["servers"][host]
    if server["power"] == "on" and server["state"] == "up":
        return
    server["power"] = "on"
    server["state"] = "up"
    server["booted"] = now
    server["mounts"] = {}
    server["params"] = {}  # lctl set_param values do not survive a reboot
