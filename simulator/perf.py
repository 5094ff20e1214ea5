"""Performance model of the virtual hardware (DESIGN §2 and §5).

One healthy RAID-6 8+2 volume group of NL-SAS drives with 128 KiB segments streams about
410 "MB/s" as obdfilter-survey prints it (19.8 GB/s measured on 48 OSTs; the script prints
MiB/s, so the bytes behind it are about 5 % more); 512 KiB segments do about 12 % better on
large sequential I/O; a degraded group is slower (reconstruction reads, and the reconstruction
itself while one runs), a critical one slower still, a failed one not at all; a group copying
back from a hot spare has every drive but loses about 30 % to the copy. An OSS never moves
more than its ceiling (about 5 GB/s: its HCA and its share of the SAS fabric), and one RAID
controller alone carries about 3.2 GB/s. An array that lost a controller also loses its
mirrored write cache (E-series suspends write caching while the alternate controller is
offline), so every write to its volumes goes to the drives: writes run at about half speed.
The workload and obdfilter-survey both use these numbers, so an acceptance survey passes or
fails for hardware reasons.
"""

from __future__ import annotations

from simulator.topology import (
    controller_serving,
    target_health,
    target_volume,
    volume_group_health,
)

MB = 1_000_000

# MB/s (10^6 bytes) of one healthy 8+2 group with 128 KiB segments, large sequential I/O.
# obdfilter-survey prints these as 412, 389 and 396 (MiB/s).
OST_READ_MB_S = 432.0
OST_WRITE_MB_S = 408.0
OST_REWRITE_MB_S = 415.0
SEGMENT_FACTOR = {128: 1.0, 256: 1.06, 512: 1.12}
HEALTH_FACTOR = {"optimal": 1.0, "degraded": 0.62, "critical": 0.45, "failed": 0.0}
# A copyback (or any operation on a group that lost no drive) reads and writes behind the I/O.
BUSY_GROUP_FACTOR = 0.7
OSS_CEILING_MB_S = 5000.0
MDS_CEILING_MB_S = 2500.0
CONTROLLER_CEILING_MB_S = 3200.0
# Writes with the array's write cache suspended (a controller failed): straight to the drives.
WRITE_THROUGH_FACTOR = 0.55
# A volume group slow at the array (`inject array-slow`): each I/O waits the added time, and
# with the few I/Os an OST keeps in flight (about 8 of 1 MiB) its bandwidth falls with it.
SLOW_IOS_IN_FLIGHT = 8
SLOW_IO_BYTES = 1_048_576
# One SAS link of a server down: multipath still has a path; slight loss of bandwidth.
ONE_SAS_LINK_DOWN_FACTOR = 0.92


def segment_factor(segment_kib: int) -> float:
    return SEGMENT_FACTOR.get(int(segment_kib), 1.0 if segment_kib < 128 else 1.12)


def ost_bandwidth(state: dict, target: dict, test: str = "write") -> float:
    """MB/s that one target's volume group can stream for `test` (write, rewrite, read)."""
    found = target_volume(state, target)
    if not found:
        return 0.0
    array, volume = found
    group = array["volume_groups"].get(volume["vg"])
    if group is None or controller_serving(array, volume) is None:
        return 0.0
    width_factor = group["data_drives"] / 8.0
    base = {"read": OST_READ_MB_S, "rewrite": OST_REWRITE_MB_S}.get(test, OST_WRITE_MB_S)
    health = volume_group_health(array, group)
    factor = HEALTH_FACTOR[health["state"]]
    if health["operation"] and health["state"] == "optimal":
        factor *= BUSY_GROUP_FACTOR
    rate = base * width_factor * segment_factor(volume["segment_kib"]) * factor
    if test != "read" and not write_cache_mirrored(array):
        rate *= WRITE_THROUGH_FACTOR
    slow_ms = group.get("slow_ms") or 0.0
    if slow_ms > 0:
        rate = min(rate, SLOW_IOS_IN_FLIGHT * SLOW_IO_BYTES / (slow_ms / 1000.0) / MB)
    return rate


def array_delay_ms(state: dict, target: dict) -> float:
    """The service time an array adds to each I/O of a target's volume (`inject array-slow`
    on its volume group), in ms."""
    found = target_volume(state, target)
    if not found:
        return 0.0
    array, volume = found
    group = array["volume_groups"].get(volume["vg"]) or {}
    return float(group.get("slow_ms") or 0.0)


def write_cache_mirrored(array: dict) -> bool:
    """Write caching needs both controllers: one failed, the survivor writes through."""
    return all(status == "optimal" for status in array["controllers"].values())


def host_ceiling(state: dict, host: str) -> float:
    server = state["servers"][host]
    if server["state"] != "up":
        return 0.0
    ceiling = MDS_CEILING_MB_S if server["role"] == "mds" else OSS_CEILING_MB_S
    links = [up for array in server["sas"].values() for up in array.values()]
    if links and not all(links):
        ceiling *= ONE_SAS_LINK_DOWN_FACTOR
    return ceiling


def controller_ceilings(state: dict) -> dict[tuple[str, str], float]:
    """MB/s each working controller can carry, keyed by (array, controller)."""
    ceilings = {}
    for name, array in state["arrays"].items():
        for controller, status in array["controllers"].items():
            ceilings[(name, controller)] = CONTROLLER_CEILING_MB_S if status == "optimal" else 0.0
    return ceilings


def target_controller(state: dict, target: dict) -> tuple[str, str] | None:
    found = target_volume(state, target)
    if not found:
        return None
    array, volume = found
    controller = controller_serving(array, volume)
    return (array["name"], controller) if controller else None


def io_size_factor(record_kib: int) -> float:
    """Smaller records cost more per byte: 1 MiB and up stream at full speed."""
    if record_kib >= 1024:
        return 1.0
    return max(0.25, (record_kib / 1024.0) ** 0.3)


def threads_factor(threads_per_ost: int) -> float:
    """One thread per OST leaves the group idle between I/Os; 4 or more keep it busy."""
    return {1: 0.55, 2: 0.8, 4: 0.95}.get(threads_per_ost, 1.0 if threads_per_ost > 4 else 0.5)


def is_target_usable(state: dict, target: dict) -> bool:
    return bool(target.get("mounted_on")) and target_health(state, target) != "failed"
