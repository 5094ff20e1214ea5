"""Injecting and clearing the failures of the failure matrix (DESIGN §2).

- server-crash (--server): the server panics and its targets stop; the partner fences it
  (BMC, else PDU: the server is powered off) and takes its targets; if no fence device can
  reach it, nothing moves.
- heartbeat-down (--server): the server's cluster link; the partner fences it, takes over.
- lnet-down (--server): the server's LNet (public) link; healthLNET's `pingd` drops to 0
  there, so Pacemaker moves its targets to the partner.
- private-switch-down (--pair or --server): heartbeat, BMC and PDU network of the pair; no
  fencing is possible and nothing moves.
- bmc-down / pdu-down (--server): one fence path; ipmitool fails (BMC), the other device
  fences instead.
- sas-link-down (--server, --links 1 or 0 for all): one link: multipath keeps a path, a
  little bandwidth is lost; all: I/O to its targets hangs (queued for the rack's
  `multipath_queue_seconds`, 0 by default), then the partner fences it and takes over.
- drive-failed (--array with --drive T,D,S, or --volume-group with --count N): the group is
  degraded (1), critical (2) or failed (3: the OST is lost); a global hot spare, if any,
  rebuilds, and stays "in use" (a member in the failed drive's place) until copyback.
- drawer-failed (--array --enclosure T --drawer D): every group with drives there is
  degraded, all stay online.
- controller-failed (--array --controller A|B): the partner controller serves every volume
  (the array is slower).
- management-port-down (--array --controller A|B): the controller's management port (its REST
  API) does not answer; the controller itself works and serves its volumes.
- array-slow (--array --volume-group G, --latency-ms N): the array takes N ms more (40 by
  default) for each I/O to that group's volumes (a drive that retries, a misbehaving
  controller path): the volumes' latency at the array rises, the OSTs on them see the same
  longer service time and move less; their OSS stays idle and its other OSTs are normal.
- hot-cpu / hot-inlet (--server, --celsius N): a CPU cooler or the room's cooling fails; the
  BMC's CPU temperatures read N °C (90 by default), or its inlet air does (43 by default) and
  every other temperature rises with it.

On a pair whose cluster is real (`add --real-cluster`), server-crash, heartbeat-down, bmc-down,
pdu-down and private-switch-down are done for real (a panic, pulled cables, a silent PDU:
`simulator/realcluster/faults.py`) and the pair's own Corosync and Pacemaker react; the rack
records them all the same.

What the servers' kernels log about each (recovery where targets move, lost connections, a
lost RAID group's I/O errors, LNet timeouts, a new boot after a crash) is written by
`simulator/kernel_log.py` when the rack is saved.

Each injection gets an id (`f1`, `f2`, ...) and stays active until cleared. Clearing repairs
the hardware; a server that was fenced rejoins its cluster, and Pacemaker (stickiness) keeps
the targets where they are: failing back is an operator's `crm_resource --move`. Clearing a
failed drive is an instant repair (a spare in its place is copied back at once).

A failed drive can also be replaced as a technician does (`replace_drive`, `python -m
simulator replace-drive`): a blank drive goes into its slot and its failure is resolved, but
the data comes back only through the array. If a hot spare holds the failed drive's data
(its reconstruction finished), the array copies it back to the new drive by itself (the
group's `copyback`; optimal meanwhile), then the spare is a standby spare again. Otherwise
the new drive is "replaced" (a member holding nothing: the group stays degraded; an
unfinished reconstruction onto a spare is dropped and the spare returned) until `SMcli`'s
`start drive [t,d,s] reconstruct;` rebuilds onto it. Both take the rack's `rebuild_seconds`
(`simulator.rebuilds.rebuild_seconds`).
"""

from __future__ import annotations

from simulator import cluster, operations, realcluster
from simulator.rebuilds import copy_back, start_copyback
from simulator.state import RackError
from simulator.topology import drive_at, touch, volume_group_health

KINDS = {
    "server-crash",
    "heartbeat-down",
    "lnet-down",
    "private-switch-down",
    "bmc-down",
    "pdu-down",
    "sas-link-down",
    "drive-failed",
    "drawer-failed",
    "controller-failed",
    "management-port-down",
    "array-slow",
    "hot-cpu",
    "hot-inlet",
}
# Which of a BMC's temperatures each overheating failure sets, and to what by default
# (simulator.commands.ipmitool).
HEAT = {"hot-cpu": ("cpu", 90.0), "hot-inlet": ("inlet", 43.0)}
# The service time `array-slow` adds to each I/O of the group by default (ms): a healthy
# group's is a few ms, so the OSTs on it are an order of magnitude slower.
SLOW_MS = 40.0


# What leaves a server of the imitation down until it is cleared (crashed, or fenced off).
RESTARTS = ("server-crash", "heartbeat-down", "sas-link-down")


def _server(rack, name: str | None) -> dict:
    if not name:
        raise RackError("this failure needs --server")
    return rack.server(name)


def _array(rack, name: str | None) -> dict:
    if not name or name not in rack.state["arrays"]:
        raise RackError(f"unknown array {name!r} (--array)")
    return rack.state["arrays"][name]


def _parse_drive(text: str) -> tuple[int, int, int]:
    try:
        tray, drawer, slot = (int(x) for x in text.split(","))
    except ValueError:
        raise RackError(f"--drive wants tray,drawer,slot, not {text!r}") from None
    return tray, drawer, slot


def inject(
    rack,
    kind: str,
    *,
    server: str | None = None,
    array: str | None = None,
    drive: str | None = None,
    volume_group: str | None = None,
    count: int = 1,
    enclosure: int | None = None,
    drawer: int | None = None,
    controller: str | None = None,
    links: int = 1,
    pair: str | None = None,
    celsius: float | None = None,
    latency_ms: float | None = None,
) -> dict:
    if kind not in KINDS:
        raise RackError(f"unknown failure {kind!r}; one of {', '.join(sorted(KINDS))}")
    state = rack.state
    failure: dict = {"id": f"f{state['next_failure']}", "kind": kind, "time": rack.now}
    affected_pairs: set[str] = set()

    if kind in HEAT:
        host = _server(rack, server)
        sensor, default = HEAT[kind]
        failure.update(
            server=host["hostname"],
            where=host["hostname"],
            celsius=default if celsius is None else celsius,
        )
        host.setdefault("heat", {})[sensor] = failure["celsius"]
    elif kind in (
        "server-crash",
        "heartbeat-down",
        "lnet-down",
        "bmc-down",
        "pdu-down",
        "sas-link-down",
    ):
        host = _server(rack, server)
        failure.update(server=host["hostname"], where=host["hostname"])
        affected_pairs.add(host["pair"])
        if kind == "server-crash" and _real(state, host["pair"]):
            realcluster.faults.crash(rack.root, state, host["hostname"])
        elif kind == "server-crash":
            if host["state"] != "up":
                raise RackError(f"{host['hostname']} is not running")
            for label in list(host["mounts"]):
                operations.release_target(state, state["targets"][label])
            host["state"] = "crashed"
        elif kind == "heartbeat-down":
            host["heartbeat_up"] = False
        elif kind == "lnet-down":
            host["lnet_link_up"] = False
        elif kind == "bmc-down":
            host["bmc_up"] = False
        elif kind == "pdu-down":
            host["pdu_up"] = False
        else:
            pulled = []
            for array_name, paths in sorted(host["sas"].items()):
                for ctrl in sorted(paths):
                    if paths[ctrl] and (links == 0 or len(pulled) < links):
                        paths[ctrl] = False
                        pulled.append([array_name, ctrl])
            if not pulled:
                raise RackError(f"{host['hostname']} has no SAS link left to pull")
            failure["links"] = pulled
            if not any(up for paths in host["sas"].values() for up in paths.values()):
                # Every path gone: I/O to its targets is queued, then hangs, and the partner
                # fences it (cluster.io_given_up).
                host["io_hung"] = True
                host["io_hung_since"] = rack.now
    elif kind == "private-switch-down":
        name = pair or (rack.server(server)["pair"] if server else None)
        if not name or name not in state["pairs"]:
            raise RackError("private-switch-down needs --pair (or --server)")
        state["pairs"][name]["private_switch_up"] = False
        failure.update(pair=name, where=name)
        affected_pairs.add(name)
    else:
        target_array = _array(rack, array)
        touch(target_array)
        affected_pairs.add(target_array["pair"])
        failure["array"] = target_array["name"]
        if kind == "controller-failed":
            if controller not in ("A", "B"):
                raise RackError("controller-failed needs --controller A or B")
            target_array["controllers"][controller] = "failed"
            failure.update(
                controller=controller, where=f"{target_array['name']} controller {controller}"
            )
        elif kind == "management-port-down":
            if controller not in ("A", "B"):
                raise RackError("management-port-down needs --controller A or B")
            down = target_array.setdefault("ports_down", [])
            if controller not in down:
                down.append(controller)
            failure.update(
                controller=controller,
                where=f"{target_array['name']} controller {controller}'s management port",
            )
        elif kind == "array-slow":
            group = target_array["volume_groups"].get(volume_group or "")
            if group is None:
                raise RackError(
                    f"array-slow needs --volume-group, one of {target_array['name']}'s groups "
                    f"({', '.join(sorted(target_array['volume_groups'])) or 'none'})"
                )
            added = SLOW_MS if latency_ms is None else float(latency_ms)
            if added <= 0:
                raise RackError(f"--latency-ms must be positive, not {latency_ms:g}")
            group["slow_ms"] = group.get("slow_ms", 0.0) + added
            failure.update(
                volume_group=group["name"],
                latency_ms=added,
                where=f"{target_array['name']} {group['name']} +{added:g} ms",
            )
        elif kind == "drawer-failed":
            if enclosure is None or drawer is None:
                raise RackError("drawer-failed needs --enclosure and --drawer")
            shelf = target_array["enclosures"][enclosure]
            if not 1 <= drawer <= shelf["drawers"]:
                raise RackError(f"enclosure {enclosure} has drawers 1..{shelf['drawers']}")
            if drawer not in shelf["drawers_offline"]:
                shelf["drawers_offline"].append(drawer)
            failure.update(
                enclosure=enclosure,
                drawer=drawer,
                where=f"{target_array['name']} tray {enclosure} drawer {drawer}",
            )
        else:
            failure["drives"] = _fail_drives(target_array, drive, volume_group, count)
            failure["where"] = f"{target_array['name']} " + " ".join(
                ",".join(map(str, d)) for d in failure["drives"]
            )
    state["next_failure"] += 1
    state["failures"][failure["id"]] = failure
    _pull_real_cables(rack, affected_pairs)
    failure["events"] = _react(rack, affected_pairs)
    return failure


def _real(state: dict, pair: str) -> bool:
    return bool(state["pairs"][pair].get("real_cluster"))


def _pull_real_cables(rack, pairs: set[str]) -> None:
    """On a real-cluster pair the cables are real: pull (or plug back) what the rack's
    failures say (simulator/realcluster/faults.py)."""
    for pair in sorted(pairs):
        if _real(rack.state, pair):
            realcluster.faults.sync_cables(rack.root, rack.state, pair)


def _fail_drives(
    array: dict, drive: str | None, group_name: str | None, count: int
) -> list[list[int]]:
    if drive:
        address = _parse_drive(drive)
        chosen = [address]
    else:
        group = array["volume_groups"].get(group_name or "")
        if group is None:
            raise RackError(f"unknown volume group {group_name!r} in {array['name']}")
        healthy = [
            tuple(d)
            for d in group["drives"]
            if drive_at(array, *d) and drive_at(array, *d)["state"] != "failed"
        ]
        # One drive per drawer first, as independent failures would be.
        seen: dict[tuple[int, int], int] = {}
        order = {}
        for address in healthy:
            shelf_drawer = (address[0], address[1])
            order[address] = (seen.get(shelf_drawer, 0), address)
            seen[shelf_drawer] = seen.get(shelf_drawer, 0) + 1
        healthy.sort(key=order.__getitem__)
        if count < 1 or count > len(healthy):
            raise RackError(f"cannot fail {count} drives of {group_name}")
        chosen = healthy[:count]
    failed = []
    for tray, drawer_no, slot in chosen:
        record = drive_at(array, tray, drawer_no, slot)
        if record is None:
            raise RackError(f"no drive at {tray},{drawer_no},{slot}")
        if drive and record["state"] == "failed":  # named with --drive
            raise RackError(f"the drive at {tray},{drawer_no},{slot} has already failed")
        touch(array)  # each drive's loss counts in the next one's health
        address = [tray, drawer_no, slot]
        group = array["volume_groups"].get(record.get("vg") or "")
        if group:
            _stop_operations_onto(array, group, address)
            if address not in group["drives"]:
                # Not a member (yet): a spare still rebuilding, a drive waiting for copyback.
                record.pop("replaces", None)
                record["vg"] = None
        record["previous"] = record["state"]
        record["state"] = "failed"
        record.pop("replaces", None)
        failed.append([tray, drawer_no, slot])
        if record.get("vg"):
            _start_rebuild(array, array["volume_groups"][record["vg"]], [tray, drawer_no, slot])
    return failed


def _stop_operations_onto(array: dict, group: dict, address: list[int]) -> None:
    """The drive at `address` fails while a reconstruction or a copyback writes to it or reads
    from it: that operation stops. A spare's unfinished reconstruction starts again on another
    spare, if there is one; a copyback's target is left blank, out of the group."""
    rebuild = group.get("rebuild")
    if rebuild and rebuild["spare"] == address:
        group["rebuild"] = None
        if rebuild["replacing"] != address:
            _start_rebuild(array, group, rebuild["replacing"])
    copyback = group.get("copyback")
    if copyback and address in (copyback["to"], copyback["spare"]):
        group["copyback"] = None
        target = drive_at(array, *copyback["to"])
        if target and copyback["to"] != address:
            target.update(state="unassigned", vg=None)
        start_copyback(array, group)


def _start_rebuild(array: dict, group: dict, failed: list[int]) -> None:
    """A global hot spare of the same array takes the failed drive's place and rebuilds."""
    if group.get("rebuild") or volume_group_health(array, group)["state"] == "failed":
        return
    for enclosure in array["enclosures"]:
        for key, drive in enclosure["drives"].items():
            if drive["state"] == "hot_spare":
                drawer, slot = (int(x) for x in key.split(","))
                drive["state"] = "spare_in_use"
                drive["vg"] = group["name"]
                group["rebuild"] = {
                    "progress": 0,
                    "elapsed": 0.0,
                    "spare": [enclosure["tray"], drawer, slot],
                    "replacing": list(failed),
                }
                return


def _react(rack, pairs: set[str]) -> list[dict]:
    events = []
    for pair_name in sorted(pairs):
        events += cluster.reconcile(rack, pair_name)
    return events


def clear(rack, failure_id: str | None) -> list[dict]:
    """Repair one failure (or all of them, newest first)."""
    state = rack.state
    if failure_id is None:
        ids = sorted(state["failures"], key=lambda f: int(f[1:]), reverse=True)
    elif failure_id in state["failures"]:
        ids = [failure_id]
    else:
        raise RackError(f"no active failure {failure_id}")
    cleared = []
    pairs: set[str] = set()
    restart: list[str] = []
    for fid in ids:
        failure = state["failures"].pop(fid)
        kind = failure["kind"]
        if "server" in failure:
            host = state["servers"][failure["server"]]
            pairs.add(host["pair"])
            if kind == "server-crash" and _real(state, host["pair"]):
                restart.append(host["hostname"])  # once its cables are back
            elif not _real(state, host["pair"]) and host["state"] != "up" and kind in RESTARTS:
                # repaired and restarted (it was crashed, or fenced off)
                operations.power_on(state, host["hostname"], rack.now)
                host["pacemaker"] = True
            if kind in HEAT:
                host.get("heat", {}).pop(HEAT[kind][0], None)
            elif kind == "server-crash":
                host["pacemaker"] = True
            elif kind == "heartbeat-down":
                host["heartbeat_up"] = True
                host["pacemaker"] = True
            elif kind == "lnet-down":
                host["lnet_link_up"] = True
            elif kind == "bmc-down":
                host["bmc_up"] = True
            elif kind == "pdu-down":
                host["pdu_up"] = True
            elif kind == "sas-link-down":
                for array_name, ctrl in failure.get("links", []):
                    host["sas"][array_name][ctrl] = True
                host.pop("io_hung_since", None)
                if host.pop("io_hung", False):
                    host["pacemaker"] = True
        elif kind == "private-switch-down":
            state["pairs"][failure["pair"]]["private_switch_up"] = True
            pairs.add(failure["pair"])
        else:
            array = state["arrays"][failure["array"]]
            touch(array)
            pairs.add(array["pair"])
            if kind == "controller-failed":
                array["controllers"][failure["controller"]] = "optimal"
            elif kind == "management-port-down":
                down = array.get("ports_down", [])
                if failure["controller"] in down:
                    down.remove(failure["controller"])
            elif kind == "array-slow":
                group = array["volume_groups"].get(failure["volume_group"]) or {}
                left = group.get("slow_ms", 0.0) - failure["latency_ms"]
                if left > 1e-9:
                    group["slow_ms"] = left
                else:
                    group.pop("slow_ms", None)
            elif kind == "drawer-failed":
                shelf = array["enclosures"][failure["enclosure"]]
                if failure["drawer"] in shelf["drawers_offline"]:
                    shelf["drawers_offline"].remove(failure["drawer"])
            else:
                for address in failure["drives"]:
                    _replace_drive(array, address)
        failure["cleared"] = rack.now
        cleared.append(failure)
    _pull_real_cables(rack, pairs)
    for host_name in restart:
        realcluster.faults.power_on_again(rack.root, state, host_name)
    events = _react(rack, pairs)
    if cleared:
        cleared[-1]["events"] = events
    return cleared


def _replace_drive(array: dict, address: list[int]) -> None:
    """`clear`: a new drive in the failed one's slot, the group repaired at once. An unfinished
    rebuild onto a spare is dropped and the spare returned; a spare that finished it is
    copied back at once."""
    drive = drive_at(array, *address)
    if drive is None:
        return
    touch(array)
    address = list(address)
    drive.pop("previous", None)
    group = array["volume_groups"].get(drive.get("vg") or "")
    if group is None:
        drive.update(state="unassigned", vg=None)
        return
    _drop_rebuild_for(array, group, address)
    spare = _spare_replacing(array, group, address)
    if spare is not None:
        copy_back(array, group, spare, address)
    elif address in group["drives"]:
        drive["state"] = "assigned"
    else:
        drive.update(state="unassigned", vg=None)


def _drop_rebuild_for(array: dict, group: dict, address: list[int]) -> None:
    """An unfinished reconstruction of the drive at `address` stops; its spare is returned."""
    rebuild = group.get("rebuild")
    if not rebuild or rebuild["replacing"] != address:
        return
    if rebuild["spare"] != address:
        spare = drive_at(array, *rebuild["spare"])
        if spare:
            spare.update(state="hot_spare", vg=None)
    group["rebuild"] = None


def _spare_replacing(array: dict, group: dict, address: list[int]) -> list[int] | None:
    """The hot spare (a member, in use) that holds the data of the failed drive at `address`."""
    for member in group["drives"]:
        drive = drive_at(array, *member)
        if drive and drive["state"] == "spare_in_use" and drive.get("replaces") == address:
            return list(member)
    return None


def replace_drive(rack, array_name: str | None, drive: str | None) -> dict:
    """A technician puts a new drive into the slot of a failed one (see the module's notes).
    Returns what happened: the drive's new state, its volume group, the copyback started
    (its spare) and the failures it resolved."""
    array = _array(rack, array_name)
    if not drive:
        raise RackError("replace-drive needs --drive tray,drawer,slot")
    address = list(_parse_drive(drive))
    record = drive_at(array, *address)
    where = f"{array['name']} tray {address[0]}, drawer {address[1]}, slot {address[2]}"
    if record is None:
        raise RackError(f"no drive at {where}")
    if record["state"] != "failed":
        raise RackError(f"the drive at {where} has not failed ({record['state']})")
    touch(array)
    group = array["volume_groups"].get(record.get("vg") or "")
    # A new, blank drive: no earlier state, locate LED off.
    record.clear()
    record.update(state="unassigned", vg=None)
    copyback_from, copyback_waits = None, False
    if group is not None:
        _drop_rebuild_for(array, group, address)
        copyback_from = _spare_replacing(array, group, address)
        if copyback_from is not None or address in group["drives"]:
            record.update(state="replaced", vg=group["name"])
        if copyback_from is not None:
            start_copyback(array, group)
            copyback_waits = group["copyback"]["to"] != address
    resolved = _resolve_drive_failures(rack, array["name"], address)
    return {
        "array": array["name"],
        "drive": address,
        "state": record["state"],
        "volume_group": group["name"] if group and record["vg"] else None,
        "copyback_from": copyback_from,
        "copyback_waits": copyback_waits,
        "resolved": resolved,
    }


def _resolve_drive_failures(rack, array_name: str, address: list[int]) -> list[str]:
    """The failures that failed this drive no longer hold it; one left with no drive ends."""
    resolved = []
    for failure_id, failure in sorted(rack.state["failures"].items()):
        if failure.get("array") != array_name or address not in failure.get("drives", []):
            continue
        failure["drives"].remove(address)
        resolved.append(failure_id)
        if failure["drives"]:
            failure["where"] = f"{array_name} " + " ".join(
                ",".join(map(str, d)) for d in failure["drives"]
            )
        else:
            failure["cleared"] = rack.now
            del rack.state["failures"][failure_id]
    return resolved
