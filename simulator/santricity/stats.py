"""The arrays' analysed statistics: what each controller measured over its last sample window,
which here is the workload's last step (simulator.workload records it).

A volume's figures are its target's I/O as the array served it: the same operations and bytes
the server's counters count, with the array's share of the service time (the server adds its
own, simulator.workload.SERVER_US). A drive's are its group's volumes' traffic spread over the
members that hold data (a RAID 6 full-stripe write puts a segment on every member, parity
included); a controller's are the volumes it owns now; a host interface's (one SAS port per
server cabled to the controller) are those of the volumes whose server uses that port.
Units are the real API's: operations/s, MB/s (10^6 bytes), ms.
"""

from __future__ import annotations

import time

from simulator.santricity import refs
from simulator.topology import controller_serving, drive_at, drive_missing

MB = 1_000_000
# A controller's CPU: idle housekeeping plus a share per MB/s moved (3.2 GB/s is its ceiling).
CPU_IDLE_PERCENT = 4.0
CPU_PERCENT_PER_MB_S = 70.0 / 3200.0
# Reads of large sequential streams seldom hit the cache; the prefetch catches some.
READ_CACHE_HIT_PERCENT = 22.0


def record(state: dict, volume_io: dict[str, list[float]], now: float, dt: float) -> None:
    """Keep, per array, each volume's rates over the step that ends at `now`: `volume_io`
    holds, per target label, [read ops, write ops, read bytes, write bytes, read µs summed,
    write µs summed]."""
    per_array: dict[str, dict[str, list[float]]] = {}
    for label, (n_r, n_w, b_r, b_w, us_r, us_w) in volume_io.items():
        target = state["targets"][label]
        array_name, volume = target.get("array"), target["volume"]
        if array_name not in state["arrays"]:
            continue
        per_array.setdefault(array_name, {})[volume] = [
            round(n_r / dt, 2),
            round(n_w / dt, 2),
            round(b_r / dt / MB, 3),
            round(b_w / dt / MB, 3),
            round(us_r / n_r / 1000, 3) if n_r else 0.0,
            round(us_w / n_w / 1000, 3) if n_w else 0.0,
        ]
    for name, array in state["arrays"].items():
        array["perf"] = {"time": now, "dt": dt, "volumes": per_array.get(name, {})}


IDLE = [0.0] * 6


def _window(array: dict) -> tuple[float, dict[str, list[float]]]:
    perf = array.get("perf") or {}
    return perf.get("time") or time.time(), perf.get("volumes") or {}


def _observed(when: float) -> dict:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when))
    millis = int(round(when * 1000))
    return {"observedTime": f"{stamp}.{millis % 1000:03d}+0000", "observedTimeInMS": str(millis)}


def _figures(values: list[float], window: float) -> dict:
    r_iops, w_iops, r_mb, w_mb, r_ms, w_ms = values
    total = r_iops + w_iops
    combined_ms = (r_ms * r_iops + w_ms * w_iops) / total if total else 0.0
    return {
        "readIOps": r_iops,
        "writeIOps": w_iops,
        "otherIOps": 0.0,
        "combinedIOps": round(total, 2),
        "readThroughput": r_mb,
        "writeThroughput": w_mb,
        "combinedThroughput": round(r_mb + w_mb, 3),
        "readResponseTime": r_ms,
        "writeResponseTime": w_ms,
        "combinedResponseTime": round(combined_ms, 3),
        "averageReadOpSize": round(r_mb * MB / r_iops, 1) if r_iops else 0.0,
        "averageWriteOpSize": round(w_mb * MB / w_iops, 1) if w_iops else 0.0,
        "readOps": round(r_iops * window, 1),
        "writeOps": round(w_iops * window, 1),
    }


def _sum(rows: list[list[float]]) -> list[float]:
    """Rates add up; response times are weighted by operations."""
    out = [0.0] * 6
    for row in rows:
        for i in range(4):
            out[i] += row[i]
        out[4] += row[4] * row[0]
        out[5] += row[5] * row[1]
    out[4] = round(out[4] / out[0], 3) if out[0] else 0.0
    out[5] = round(out[5] / out[1], 3) if out[1] else 0.0
    return [round(v, 3) for v in out]


def volume_statistics(array: dict) -> list[dict]:
    when, volumes = _window(array)
    window = (array.get("perf") or {}).get("dt") or 0.0
    out = []
    for name, volume in sorted(array["volumes"].items()):
        values = volumes.get(name, IDLE)
        owner = controller_serving(array, volume) or volume["owner"]
        total = values[0] + values[1]
        mean_ms = (values[4] * values[0] + values[5] * values[1]) / total if total else 0.0
        out.append(
            {
                **_observed(when),
                "volumeId": refs.volume_ref(array["name"], name),
                "volumeName": name,
                "poolId": refs.group_ref(array["name"], volume["vg"]),
                "controllerId": refs.CONTROLLER_REFS[owner],
                "workLoadId": "",
                "mapped": True,
                **_figures(values, window),
                "readPhysicalIOps": values[0],
                "writePhysicalIOps": values[1],
                "readCacheUtilization": READ_CACHE_HIT_PERCENT if values[0] else 0.0,
                "writeCacheUtilization": 0.0,
                # Little's law: I/Os in flight = rate x time in the array.
                "queueDepthTotal": round(total * mean_ms / 1000.0, 2),
                "queueDepthMax": round(2 * total * mean_ms / 1000.0, 2),
            }
        )
    return out


def drive_values(array: dict) -> dict[tuple[int, int, int], list[float]]:
    """Each member drive's share of its group's traffic."""
    _when, volumes = _window(array)
    out: dict[tuple[int, int, int], list[float]] = {}
    for name, group in array["volume_groups"].items():
        traffic = _sum([volumes[v] for v in volumes if array["volumes"][v]["vg"] == name])
        members = [
            tuple(d)
            for d in group["drives"]
            if (drive_at(array, *d) or {}).get("state") in ("assigned", "spare_in_use")
            and not drive_missing(array, d[0], d[1])
        ]
        if not members:
            continue
        data = max(1, group["data_drives"])
        segment = 128 * 1024  # the OST volumes' segment: each member reads or writes one
        r_mb = traffic[2] / data  # reads touch the data segments only
        w_mb = traffic[3] / data  # a full stripe: every member, parity included
        for address in members:
            out[address] = [
                round(r_mb * MB / segment, 2),
                round(w_mb * MB / segment, 2),
                round(r_mb, 3),
                round(w_mb, 3),
                round(traffic[4] * 0.8, 3),
                round(traffic[5] * 0.8, 3),
            ]
    return out


def drive_statistics(array: dict) -> list[dict]:
    when, _volumes = _window(array)
    window = (array.get("perf") or {}).get("dt") or 0.0
    values = drive_values(array)
    out = []
    for enclosure in array["enclosures"]:
        tray = enclosure["tray"]
        for key in sorted(enclosure["drives"], key=lambda k: tuple(int(x) for x in k.split(","))):
            drawer, slot = (int(x) for x in key.split(","))
            figures = values.get((tray, drawer, slot), IDLE)
            out.append(
                {
                    **_observed(when),
                    "diskId": refs.drive_ref(array["name"], tray, drawer, slot),
                    "trayRef": refs.tray_ref(array["name"], tray),
                    "driveSlot": (drawer - 1) * enclosure["slots_per_drawer"] + slot,
                    **_figures(figures, window),
                    "readPhysicalIOps": figures[0],
                    "writePhysicalIOps": figures[1],
                }
            )
    return out


def controller_volumes(array: dict) -> dict[str, list[list[float]]]:
    _when, volumes = _window(array)
    out: dict[str, list[list[float]]] = {"A": [], "B": []}
    for name, volume in array["volumes"].items():
        owner = controller_serving(array, volume)
        if owner:
            out[owner].append(volumes.get(name, IDLE))
    return out


def controller_statistics(array: dict) -> list[dict]:
    """Only the controllers that work report: a failed one measures nothing."""
    when, _volumes = _window(array)
    window = (array.get("perf") or {}).get("dt") or 0.0
    out = []
    for name, rows in sorted(controller_volumes(array).items()):
        if array["controllers"][name] != "optimal":
            continue
        figures = _sum(rows)
        moved = figures[2] + figures[3]
        out.append(
            {
                **_observed(when),
                "controllerId": refs.CONTROLLER_REFS[name],
                **_figures(figures, window),
                "readPhysicalIOps": figures[0],
                "writePhysicalIOps": figures[1],
                "cpuAvgUtilization": round(CPU_IDLE_PERCENT + CPU_PERCENT_PER_MB_S * moved, 1),
                "maxCpuUtilization": round(
                    min(100.0, 1.3 * (CPU_IDLE_PERCENT + CPU_PERCENT_PER_MB_S * moved)), 1
                ),
                "cacheHitBytesPercent": round(READ_CACHE_HIT_PERCENT * figures[2] / moved, 1)
                if moved
                else 0.0,
            }
        )
    return out


def host_ports(state: dict, array: dict) -> list[str]:
    """The servers cabled to the array, in order: host port N of each controller is the Nth."""
    return sorted(h for h, s in state["servers"].items() if array["name"] in s["sas"])


def interface_statistics(state: dict, array: dict) -> list[dict]:
    when, volumes = _window(array)
    window = (array.get("perf") or {}).get("dt") or 0.0
    servers = host_ports(state, array)
    by_server: dict[tuple[str, str], list[list[float]]] = {}
    for target in state["targets"].values():
        if target.get("array") != array["name"] or target["volume"] not in array["volumes"]:
            continue
        owner = controller_serving(array, array["volumes"][target["volume"]])
        host = target.get("mounted_on")
        if owner and host:
            by_server.setdefault((owner, host), []).append(volumes.get(target["volume"], IDLE))
    out = []
    for controller in ("A", "B"):
        if array["controllers"][controller] != "optimal":
            continue
        for channel, host in enumerate(servers, start=1):
            figures = _sum(by_server.get((controller, host), []))
            total = figures[0] + figures[1]
            mean_ms = (figures[4] * figures[0] + figures[5] * figures[1]) / total if total else 0
            out.append(
                {
                    **_observed(when),
                    "interfaceId": refs.interface_ref(array["name"], controller, channel),
                    "channelType": "hostside",
                    **_figures(figures, window),
                    "queueDepthTotal": round(total * mean_ms / 1000.0, 2),
                    "queueDepthMax": round(2 * total * mean_ms / 1000.0, 2),
                    "channelErrorCounts": 0,
                }
            )
    return out
