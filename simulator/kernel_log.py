"""Each virtual server's kernel log (`dev/kmsg` in its tree): what a Lustre 2.15 server's kernel
prints when the rack's failures happen to it, in the record format of /dev/kmsg.

A record is `priority,sequence,microseconds,flags;message` (Linux's
Documentation/ABI/testing/dev-kmsg): the priority is the kernel's (facility 0) log level,
the sequence number grows by one per record and starts again at 0 when the server boots, the
microseconds count from the boot. A boot also gets a new `proc/sys/kernel/random/boot_id`
(`boot_id`, written by simulator/procfs.py) and starts with the lines a real boot prints before
Lustre's (the kernel, LNet's module and its NID, Lustre's build version). The last
`KEEP` records of the boot are kept (the ring buffer), in rack.json with the server.

Lustre prints its console lines through libcfs (`cfs_print_to_console`): `LustreError:` at
KERN_ERR for errors (`CERROR`: `LustreError: pid:0:(file.c:line:function()) text`; the console
errors with a message number, `LCONSOLE_ERROR_MSG`: `LustreError: 11-0: text`), `Lustre:` at
KERN_WARNING for `LCONSOLE_WARN` and KERN_INFO for `LCONSOLE_INFO`; LNet's are `LNetError:`.
The texts are lustre-release 2.15's (function names as there; line numbers are those of one
2.15 build and only decorate).

`observe(state, now)` runs at every save of the rack (as the arrays' event logs do) and writes
what changed since the last one, once:
- a target mounted again (failover, failback, restart): `Imperative Recovery enabled ...` and
  `Will be in recovery for at least 2:30, or until N clients reconnect`, then, when its
  recovery window has passed, `Recovery over after 2:30, of N clients N recovered and 0 were
  evicted.`; a server that cannot reach its clients then (its LNet down) times out and evicts
  them (`recovery is timed out, evict stale exports`, `disconnecting N stale clients`);
- a target stopped or started: its peers say so (the MDT's OSP devices for an OST, each OST's
  LWP for an MDT): `Connection to scratch-OST0003 (at 10.10.0.12@o2ib) was lost; ...` and
  `Connection restored to 10.10.0.13@o2ib (at 10.10.0.13@o2ib)`;
- a target whose volume group failed (its RAID lost): on its server the block layer's I/O
  error, ldiskfs aborting its journal and remounting read-only, and Lustre's `unable to
  precreate: rc = -30`; once it is stopped, its peers' `LustreError: 11-0: ... operation
  ost_connect to node <nid> failed: rc = -19` (a degraded group shows nothing on the server:
  the array hides it);
- an OST that filled up (where the workload's writes stop): `unable to precreate: rc = -28`;
- the MGS stopped or moved: each other server's `LustreError: 166-1: MGC10.10.0.1@o2ib:
  Connection to MGS (at 10.10.0.1@o2ib) was lost; in progress operations using this service
  will fail`, then `Connection restored to ...`;
- a server whose LNet link went down: `LNetError: ... Timed out tx for <peer>` and `Timed out
  RDMA with <peer>` on it for each server it talks to, the same about it on those; after the
  lock callback timeout (100 s) the targets still served there evict the clients that held
  locks (`lock callback timer expired after 100s: evicting client at <nid>`).
"""

from __future__ import annotations

import hashlib
import uuid

from simulator.scenarios import FILL_LIMIT
from simulator.topology import host_volumes, target_health

KEEP = 512
# Kernel log levels (include/linux/kern_levels.h).
CRIT, ERR, WARNING, NOTICE, INFO = 2, 3, 4, 5, 6
RECOVERY_SECONDS = 150  # the recovery window with Imperative Recovery (2:30)
LOCK_CALLBACK_SECONDS = 100  # ldlm_enqueue_min + the network's: a callback unanswered
KERNEL = "4.18.0-477.27.1.el8_lustre.x86_64"


def boot_id(host: str, booted: float) -> str:
    """The boot's random id (a version 4 UUID), the same for the same boot."""
    digest = hashlib.sha256(f"{host}:{booted!r}".encode()).digest()[:16]
    return str(uuid.UUID(bytes=digest, version=4))


def _pid(*parts: object) -> int:
    """A kernel thread's pid, stable for the same thread of the same boot."""
    return 2000 + int(hashlib.sha256(repr(parts).encode()).hexdigest()[:6], 16) % 30000


def _log(server: dict) -> dict:
    """The server's log for its current boot (a new boot starts a new log)."""
    log = server.get("kmsg")
    if log is None or log.get("boot") != server["booted"]:
        log = {"boot": server["booted"], "next": 0, "records": []}
        server["kmsg"] = log
        _boot_lines(server, log)
    return log


def append(server: dict, now: float, level: int, message: str) -> None:
    log = _log(server)
    usec = max(0, int((now - server["booted"]) * 1e6))
    if log["records"]:
        usec = max(usec, log["records"][-1][2])  # the kernel's clock does not go back
    log["records"].append([level, log["next"], usec, message])
    log["next"] += 1
    del log["records"][:-KEEP]


def _boot_lines(server: dict, log: dict) -> None:
    lines = [
        (
            0.0,
            NOTICE,
            f"Linux version {KERNEL} (mockbuild@builder) (gcc version 8.5.0 20210514 "
            "(Red Hat 8.5.0-18) (GCC)) #1 SMP Tue Sep 12 16:54:21 UTC 2023",
        ),
        (0.0, INFO, f"Command line: BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{KERNEL} root=/dev/sda2 ro"),
        (41.2, WARNING, "LNet: HW NUMA nodes: 2, HW CPU cores: 32, npartitions: 2"),
    ]
    lines += [(41.5, INFO, f"LNet: Added LNI {nid} [8/256/0/180]") for nid in server["nids"]]
    lines.append((41.9, INFO, "Lustre: Lustre: Build Version: 2.15.4"))
    for offset, level, message in lines:
        log["records"].append([level, log["next"], int(offset * 1e6), message])
        log["next"] += 1


def records_text(server: dict) -> str:
    """The dev/kmsg file of a running server: its records, one a line."""
    log = _log(server)
    return "".join(
        f"{level},{seq},{usec},-;{message}\n" for level, seq, usec, message in log["records"]
    )


# ---------------------------------------------------------------------------------------------
# message forms


def _error(where: str, text: str, pid: int = 0) -> str:
    """CERROR: `LustreError: pid:0:(file:line:function()) text`."""
    return f"LustreError: {pid}:0:({where}) {text}"


def _lnet_error(where: str, text: str, pid: int) -> str:
    return f"LNetError: {pid}:0:({where}) {text}"


def _minutes(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def _plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


# ---------------------------------------------------------------------------------------------
# what changed since the last save


def observe(state: dict, now: float) -> None:
    """Log, once, what changed in the rack since the last call (the module's list)."""
    for server in state["servers"].values():
        if server["state"] == "up":
            _log(server)
        else:
            server.pop("kmsg_lnet_down", None)
    for _label, target in sorted(state["targets"].items()):
        if target["kind"] == "MGT":
            _mgs(state, target, now)
            continue
        failed = target_health(state, target) == "failed"
        if target.get("kmsg_failed") and not failed:
            target.pop("kmsg_failed")  # repaired: a new failure logs again
        _mounts(state, target, now, failed)
        host = target.get("mounted_on")
        if not host or state["servers"][host]["state"] != "up":
            continue
        _recovery(state, target, now)
        if failed:
            _failed_group(state, target, host, now)
        if target["kind"] == "OST":
            _full(state, target, now)
    for host, server in sorted(state["servers"].items()):
        if server["state"] == "up":
            _lnet(state, host, now)


def _nid(state: dict, host: str) -> str:
    nids = state["servers"][host]["nids"]
    return nids[0] if nids else "0@lo"


def _peer_lines(state: dict, target: dict) -> list[tuple[str, str]]:
    """(host, import name) of every running peer that has a connection to `target`: the MDTs'
    OSP devices of an OST (`scratch-OST0003-osc-MDT0000`), each OST's LWP of an MDT
    (`scratch-MDT0000-lwp-OST0003`)."""
    fs = target["fsname"]
    found = []
    for other in sorted(state["targets"].values(), key=lambda t: t["label"]):
        host = other.get("mounted_on")
        if other["fsname"] != fs or not host or state["servers"][host]["state"] != "up":
            continue
        own = other["label"].partition("-")[2]
        if target["kind"] == "OST" and other["kind"] == "MDT":
            found.append((host, f"{target['label']}-osc-{own}"))
        elif target["kind"] == "MDT" and other["kind"] == "OST":
            found.append((host, f"{target['label']}-lwp-{own}"))
    return found


def _mounts(state: dict, target: dict, now: float, failed: bool) -> None:
    """A target started, stopped or moved: recovery where it starts, its peers' lost and
    restored connections (`failed`: its volume group failed under it)."""
    host = target.get("mounted_on")
    running = bool(host) and state["servers"][host]["state"] == "up"
    seen = target.get("kmsg_mount")
    mount = [host, target.get("mounted_at")] if running else None
    if seen == mount:
        return
    if seen is None and mount is not None and now - (mount[1] or now) >= RECOVERY_SECONDS:
        target["kmsg_mount"] = mount  # mounted before the rack kept kernel logs: long done
        return
    label = target["label"]
    if seen is not None:  # it stopped (or moved): its peers lost it
        old = seen[0]
        lost = failed
        if lost and old in state["servers"] and state["servers"][old]["state"] == "up":
            _failed_group(state, target, old, now)  # its RAID failed under it: then stopped
        for peer, name in _peer_lines(state, target):
            if peer == old:
                continue
            append(
                state["servers"][peer],
                now,
                WARNING,
                f"Lustre: {name}: Connection to {label} (at {_nid(state, old)}) was lost; "
                "in progress operations using this service will wait for recovery to complete",
            )
            if lost and mount is None:  # reconnecting finds no such target there (ENODEV)
                operation = "ost_connect" if target["kind"] == "OST" else "mds_connect"
                append(
                    state["servers"][peer],
                    now,
                    ERR,
                    f"LustreError: 11-0: {name}: operation {operation} to node "
                    f"{_nid(state, old)} failed: rc = -19",
                )
    target["kmsg_mount"] = mount
    target.pop("kmsg_recovering", None)
    target.pop("kmsg_full", None)
    if mount is None:
        return
    server = state["servers"][host]
    if target.get("mount_count", 1) > 1:
        clients = len(state["clients"])
        append(
            server,
            now,
            INFO,
            f"Lustre: {label}: Imperative Recovery enabled, recovery window shrunk from 300-900 "
            "down to 150-900",
        )
        append(
            server,
            now,
            WARNING,
            f"Lustre: {label}: Will be in recovery for at least {_minutes(RECOVERY_SECONDS)}, or "
            f"until {clients} client{_plural(clients, '', 's')} "
            f"reconnect{_plural(clients, 's', '')}",
        )
        target["kmsg_recovering"] = True
    if seen is not None:
        nid = _nid(state, host)
        for peer, name in _peer_lines(state, target):
            if peer != host:
                append(
                    state["servers"][peer],
                    now,
                    INFO,
                    f"Lustre: {name}: Connection restored to {nid} (at {nid})",
                )


def _mgs(state: dict, target: dict, now: float) -> None:
    """The MGS stopped or moved: every other running server's MGC (named after the first MGS
    NID it was given) loses it (`166-1`, its connection is not replayable) and finds it again."""
    host = target.get("mounted_on")
    running = bool(host) and state["servers"][host]["state"] == "up"
    mount = [host, target.get("mounted_at")] if running else None
    seen = target.get("kmsg_mount")
    if seen == mount:
        return
    target["kmsg_mount"] = mount
    if seen is None:
        return
    nids = target.get("servicenodes") or [_nid(state, seen[0])]
    mgc = f"MGC{nids[0]}"
    for name, server in sorted(state["servers"].items()):
        if server["state"] != "up" or not server["mounts"] or name in (seen[0], host):
            continue
        append(
            server,
            now,
            ERR,
            f"LustreError: 166-1: {mgc}: Connection to MGS (at {_nid(state, seen[0])}) was "
            "lost; in progress operations using this service will fail",
        )
        if mount is not None:
            nid = _nid(state, host)
            append(server, now, INFO, f"Lustre: {mgc}: Connection restored to {nid} (at {nid})")


def _recovery(state: dict, target: dict, now: float) -> None:
    if not target.get("kmsg_recovering"):
        return
    if now - (target.get("mounted_at") or now) < RECOVERY_SECONDS:
        return
    target.pop("kmsg_recovering")
    server = state["servers"][target["mounted_on"]]
    label = target["label"]
    clients = len(state["clients"])
    stale = clients if not server["lnet_link_up"] else 0
    if stale:
        append(server, now, WARNING, f"Lustre: {label}: recovery is timed out, evict stale exports")
        append(server, now, WARNING, f"Lustre: {label}: disconnecting {stale} stale clients")
    append(
        server,
        now,
        INFO,
        f"Lustre: {label}: Recovery over after {_minutes(RECOVERY_SECONDS)}, of {clients} clients "
        f"{clients - stale} recovered and {stale} {_plural(stale, 'was', 'were')} evicted.",
    )


def _failed_group(state: dict, target: dict, host: str, now: float) -> None:
    """The I/O errors of a target whose volume group failed, on the server it ran on, once."""
    if target.get("kmsg_failed"):
        return
    target["kmsg_failed"] = True
    server = state["servers"][host]
    volumes = host_volumes(state, host)
    number = volumes.index(target["volume"]) if target["volume"] in volumes else len(volumes)
    device = f"dm-{number}"
    pid = _pid(host, server["booted"], target["label"], "ll_ost_io")
    append(
        server,
        now,
        ERR,
        f"blk_update_request: I/O error, dev {device}, sector 1073743872 op 0x1:(WRITE) flags "
        "0x800 phys_seg 256 prio class 0",
    )
    append(
        server,
        now,
        ERR,
        f"LDISKFS-fs error (device {device}): ldiskfs_journal_check_start:61: Detected aborted "
        "journal",
    )
    append(server, now, CRIT, f"LDISKFS-fs ({device}): Remounting filesystem read-only")
    if target["kind"] == "OST":
        append(
            server,
            now,
            ERR,
            _error(
                "ofd_dev.c:1612:ofd_create_hdl()",
                f"{target['label']}: unable to precreate: rc = -30",
                pid,
            ),
        )


def _full(state: dict, target: dict, now: float) -> None:
    """Where the workload's writes stop (simulator.workload): the filling scenario's ceiling,
    else the OST's whole size."""
    limit = FILL_LIMIT if state["scenario"] == "filling" else 1.0
    full = target["used_kib"] >= limit * target["total_kib"] * 0.999
    if full == bool(target.get("kmsg_full")):
        return
    target["kmsg_full"] = full
    if full:
        host = target["mounted_on"]
        server = state["servers"][host]
        append(
            server,
            now,
            ERR,
            _error(
                "ofd_dev.c:1612:ofd_create_hdl()",
                f"{target['label']}: unable to precreate: rc = -28",
                _pid(host, server["booted"], target["label"], "ll_ost_create"),
            ),
        )


def _lnet(state: dict, host: str, now: float) -> None:
    server = state["servers"][host]
    down = not server["lnet_link_up"]
    since = server.get("kmsg_lnet_down")
    if not down:
        server.pop("kmsg_lnet_down", None)
        return
    if since is None:
        server["kmsg_lnet_down"] = {"since": now, "evicted": False}
        peers = [
            name
            for name, other in sorted(state["servers"].items())
            if name != host and other["state"] == "up"
        ]
        for peer in peers:
            _timed_out(state, host, _nid(state, peer), now)
            if state["servers"][peer]["lnet_link_up"]:
                _timed_out(state, peer, _nid(state, host), now)
        return
    if since["evicted"] or now - since["since"] < LOCK_CALLBACK_SECONDS:
        return
    since["evicted"] = True
    served = set(server["mounts"])
    clients = sorted({job["client"] for job in state["jobs"].values() if served & set(job["osts"])})
    for number, client in enumerate(clients):
        label = next(
            label
            for job in state["jobs"].values()
            if job["client"] == client
            for label in job["osts"]
            if label in served
        )
        append(server, now, ERR, _eviction(host, server, label, client, number))


def _timed_out(state: dict, host: str, peer_nid: str, now: float) -> None:
    server = state["servers"][host]
    pid = _pid(host, server["booted"], "kiblnd_sd")
    append(
        server,
        now,
        ERR,
        _lnet_error(
            "o2iblnd_cb.c:3373:kiblnd_check_txs_locked()",
            f"Timed out tx for {peer_nid}: 4 seconds",
            pid,
        ),
    )
    append(
        server,
        now,
        ERR,
        _lnet_error(
            "o2iblnd_cb.c:3448:kiblnd_check_conns()",
            f"Timed out RDMA with {peer_nid} (54): c: 0, oc: 0, rc: 8",
            pid,
        ),
    )


def _eviction(host: str, server: dict, label: str, client: str, number: int) -> str:
    """An OST's extent lock whose callback the client never answered (LDLM_ERROR's layout)."""
    seed = hashlib.sha256(f"{host}:{label}:{client}".encode()).hexdigest()
    return _error(
        "ldlm_lockd.c:261:expired_lock_main()",
        f"### lock callback timer expired after {LOCK_CALLBACK_SECONDS}s: evicting client at "
        f"{client}  ns: filter-{label}_UUID lock: 00000000{seed[:8]}/0x{seed[8:24]} lrc: 3/0,0 "
        f"mode: PW/PW res: [0x2c0000401:0x{seed[24:28]}:0x0].0x0 rrc: 3 type: EXT "
        f"[0->18446744073709551615] (req 0->1048575) gid 0 flags: 0x60000400010020 nid: {client} "
        f"remote: 0x{seed[28:44]} expref: {7 + number} pid: {_pid(host, label, 'll_ost')} "
        "timeout: 0 lvb_type: 0",
    )
