"""Each virtual server's root directory, laid out as a Lustre 2.15 server's.

`DIR/hosts/<host>/` holds what a sensor started with `--root DIR/hosts/<host>` reads where a
real one reads `/`:

| path | what |
| --- | --- |
| `proc/fs/lustre/obdfilter/<ost>/{stats,job_stats,recovery_status}` | OST counters (procfs) |
| `proc/fs/lustre/mdt/<mdt>/{md_stats,job_stats,recovery_status}` | MDT counters (procfs) |
| `sys/fs/lustre/{version,health_check}` | node-wide (sysfs) |
| `sys/fs/lustre/obdfilter/<ost>/{kbytes*,files*,num_exports,tot_*}` | OST capacity (sysfs) |
| `sys/fs/lustre/mdt/<mdt>/{kbytes*,files*,num_exports}` | MDT capacity (sysfs) |
| `sys/fs/lustre/osd-ldiskfs/<target>/{kbytes*,files*,fstype,mntdev,blocksize}` | OSD (sysfs) |
| `sys/kernel/debug/lustre/osd-ldiskfs/<target>/brw_stats` | brw_stats (debugfs, 2.15) |
| `sys/kernel/debug/lustre/ost/OSS/{ost,ost_io,ost_create}/stats` | OSS services (debugfs) |
| `sys/kernel/debug/lustre/mds/MDS/mdt/stats` | MDS service (debugfs) |
| `sys/kernel/debug/lnet/stats` | LNet counters (debugfs) |
| `proc/{stat,meminfo,loadavg,mounts}` | the node |
| `dev/mapper/<volume>` | multipath devices visible to the server (empty files) |
| `bin/` | the virtual commands (see simulator/commands) |

A server that is down has no Lustre tree at all (nothing mounted, modules not loaded).
`TreeWriter` writes a file only when its text changed, always by atomic rename.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from simulator import counters as C
from simulator.state import write_atomic
from simulator.topology import host_volumes, target_health
from simulator.workload import host_counters, target_counters

LUSTRE_VERSION = "2.15.4"
NCPU = 32
MEM_TOTAL_KB = 196_608_000
RECOVERY_WINDOW = 150.0


class TreeWriter:
    """Writes files under host roots, skipping those whose text did not change."""

    def __init__(self) -> None:
        self.cache: dict[Path, str] = {}
        self.written = 0

    def write(self, path: Path, text: str) -> None:
        if self.cache.get(path) == text:
            return
        write_atomic(path, text)
        self.cache[path] = text
        self.written += 1

    def forget(self, prefix: Path) -> None:
        for path in [p for p in self.cache if prefix in p.parents]:
            del self.cache[path]


def host_root(rack_root: Path, host: str) -> Path:
    return rack_root / "hosts" / host


def _remove(path: Path, writer: TreeWriter) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()
    writer.forget(path)


def _prune(parent: Path, keep: set[str], writer: TreeWriter) -> None:
    """Remove the per-target directories of targets no longer mounted here."""
    if not parent.is_dir():
        return
    for child in parent.iterdir():
        if child.name not in keep:
            _remove(child, writer)


def recovery_status(state: dict, target: dict, now: float) -> str:
    """What the target's recovery_status shows: INACTIVE on a first mount after format,
    RECOVERING for a while after a remount or failover (clients reconnect), then COMPLETE."""
    mounted_at = target.get("mounted_at") or now
    if target.get("mount_count", 1) <= 1:
        return "status: INACTIVE\n"
    clients = len(state["clients"])
    if now - mounted_at < RECOVERY_WINDOW:
        connected = min(clients, int(clients * (now - mounted_at) / RECOVERY_WINDOW) + 1)
        return (
            "status: RECOVERING\n"
            f"recovery_start: {int(mounted_at)}\n"
            f"time_remaining: {int(RECOVERY_WINDOW - (now - mounted_at))}\n"
            f"connected_clients: {connected}/{clients}\n"
            "req_replay_clients: 0\n"
            "lock_repay_clients: 0\n"
            f"completed_clients: {connected}\n"
            "evicted_clients: 0\n"
            "replayed_requests: 0\n"
            "queued_requests: 0\n"
            f"next_transno: {target.get('transno', 4294967296) + 1}\n"
        )
    return (
        "status: COMPLETE\n"
        f"recovery_start: {int(mounted_at)}\n"
        f"recovery_duration: {int(min(RECOVERY_WINDOW, 47))}\n"
        f"completed_clients: {clients}/{clients}\n"
        "replayed_requests: 0\n"
        f"last_transno: {target.get('transno', 4294967296)}\n"
        "VBR: DISABLED\n"
        "IR: ENABLED\n"
    )


def host_healthy(state: dict, host: str) -> bool:
    """health_check: NOT HEALTHY when a target mounted here sits on a failed volume group."""
    server = state["servers"][host]
    return all(
        target_health(state, state["targets"][label]) != "failed" for label in server["mounts"]
    )


def _capacity_files(directory: Path, target: dict, writer: TreeWriter) -> None:
    total = target["total_kib"]
    free = max(0, total - target["used_kib"])
    reserve = total * (5 if target["kind"] != "OST" else 17) // 1000
    writer.write(directory / "kbytestotal", f"{total}\n")
    writer.write(directory / "kbytesfree", f"{free}\n")
    writer.write(directory / "kbytesavail", f"{max(0, free - reserve)}\n")
    writer.write(directory / "filestotal", f"{target['files_total']}\n")
    writer.write(
        directory / "filesfree", f"{max(0, target['files_total'] - target['files_used'])}\n"
    )


def render_host(
    rack_root: Path, state: dict, store: dict, host: str, writer: TreeWriter, now: float
) -> None:
    """Bring one server's tree in line with the state and counters at time `now`."""
    server = state["servers"][host]
    base = host_root(rack_root, host)
    proc_lustre = base / "proc/fs/lustre"
    sys_lustre = base / "sys/fs/lustre"
    debug = base / "sys/kernel/debug"
    if server["state"] != "up":
        for path in (proc_lustre, sys_lustre, debug / "lustre", debug / "lnet", base / "dev"):
            _remove(path, writer)
        writer.write(base / "proc/mounts", _base_mounts())
        return

    osts = [
        state["targets"][lbl]
        for lbl in sorted(server["mounts"])
        if state["targets"][lbl]["kind"] == "OST"
    ]
    mdts = [
        state["targets"][lbl]
        for lbl in sorted(server["mounts"])
        if state["targets"][lbl]["kind"] == "MDT"
    ]
    all_targets = [state["targets"][lbl] for lbl in sorted(server["mounts"])]
    keep_osts = {t["label"] for t in osts}
    keep_mdts = {t["label"] for t in mdts}
    keep_osd = {t["label"] for t in all_targets}
    _prune(proc_lustre / "obdfilter", keep_osts, writer)
    _prune(sys_lustre / "obdfilter", keep_osts, writer)
    _prune(proc_lustre / "mdt", keep_mdts, writer)
    _prune(sys_lustre / "mdt", keep_mdts, writer)
    _prune(sys_lustre / "osd-ldiskfs", keep_osd, writer)
    _prune(debug / "lustre/osd-ldiskfs", keep_osd, writer)

    writer.write(sys_lustre / "version", f"{LUSTRE_VERSION}\n")
    writer.write(
        sys_lustre / "health_check", "healthy\n" if host_healthy(state, host) else "NOT HEALTHY\n"
    )
    exports = len(state["clients"]) + 2

    for target in osts:
        entry = target_counters(store, target, now)
        label = target["label"]
        proc_dir = proc_lustre / "obdfilter" / label
        writer.write(
            proc_dir / "stats", C.format_stats(now, entry["start"], entry["stats"], C.OST_COUNTERS)
        )
        writer.write(proc_dir / "job_stats", C.format_job_stats(entry["jobs"], C.OST_COUNTERS))
        writer.write(proc_dir / "recovery_status", recovery_status(state, target, now))
        sys_dir = sys_lustre / "obdfilter" / label
        _capacity_files(sys_dir, target, writer)
        writer.write(sys_dir / "num_exports", f"{exports}\n")
        writer.write(sys_dir / "tot_granted", f"{exports * 64 * 1024 * 1024}\n")
        writer.write(sys_dir / "tot_dirty", "0\n")
        writer.write(sys_dir / "tot_pending", "0\n")
        writer.write(sys_dir / "job_cleanup_interval", "600\n")

    for target in mdts:
        entry = target_counters(store, target, now)
        label = target["label"]
        proc_dir = proc_lustre / "mdt" / label
        writer.write(
            proc_dir / "md_stats",
            C.format_stats(now, entry["start"], entry["stats"], C.MDT_COUNTERS),
        )
        writer.write(proc_dir / "job_stats", C.format_job_stats(entry["jobs"], C.MDT_COUNTERS))
        writer.write(proc_dir / "recovery_status", recovery_status(state, target, now))
        sys_dir = sys_lustre / "mdt" / label
        _capacity_files(sys_dir, target, writer)
        writer.write(sys_dir / "num_exports", f"{exports}\n")

    for target in all_targets:
        label = target["label"]
        osd = sys_lustre / "osd-ldiskfs" / label
        _capacity_files(osd, target, writer)
        writer.write(osd / "fstype", "ldiskfs\n")
        writer.write(osd / "mntdev", f"{target['device']}\n")
        writer.write(osd / "blocksize", "4096\n")
        if target["kind"] in ("OST", "MDT"):
            entry = target_counters(store, target, now)
            writer.write(
                debug / "lustre/osd-ldiskfs" / label / "brw_stats",
                C.format_brw_stats(now, entry["brw_start"], entry["brw"]),
            )
        else:
            # The MGS has an OSD too, with an empty brw_stats.
            start = target.get("mounted_at") or now
            writer.write(
                debug / "lustre/osd-ldiskfs" / label / "brw_stats",
                C.format_brw_stats(now, start, C.new_histograms()),
            )

    hc = host_counters(store, server)
    services = C.MDS_SERVICES if server["role"] == "mds" else C.OSS_SERVICES
    service_dir = debug / ("lustre/mds/MDS" if server["role"] == "mds" else "lustre/ost/OSS")
    for name, ops in services.items():
        writer.write(
            service_dir / name / "stats",
            C.format_stats(now, hc["svc_start"], hc["svc"][name], C.SERVICE_GENERIC + ops),
        )
    writer.write(debug / "lnet/stats", " ".join(str(v) for v in hc["lnet"]) + "\n")
    _node_files(base, server, hc, now, writer)
    _devices(base, state, host, writer)
    writer.write(
        base / "proc/mounts",
        _base_mounts()
        + "".join(
            f"{t['device']} {t['mountpoint']} lustre {mount_options(state, t)} 0 0\n"
            for t in all_targets
        ),
    )


def mount_options(state: dict, target: dict) -> str:
    options = [f"ro,svname={target['label']}"]
    if target["kind"] != "MGT" and target.get("mgsnodes"):
        options.append(f"mgsnode={':'.join(target['mgsnodes'])}")
    options.append("osd=osd-ldiskfs,user_xattr,errors=remount-ro")
    return ",".join(options)


def _base_mounts() -> str:
    return (
        "/dev/sda2 / xfs rw,relatime,attr2,inode64,noquota 0 0\n"
        "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
        "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
        "debugfs /sys/kernel/debug debugfs rw,relatime 0 0\n"
    )


def _devices(base: Path, state: dict, host: str, writer: TreeWriter) -> None:
    mapper = base / "dev/mapper"
    visible = set(host_volumes(state, host))
    _prune(mapper, visible, writer)
    for name in visible:
        writer.write(mapper / name, "")


def _node_files(base: Path, server: dict, hc: dict, now: float, writer: TreeWriter) -> None:
    cpu = hc["cpu"]
    boot = int(server["booted"])
    lines = ["cpu  " + " ".join(str(v) for v in cpu) + " 0 0\n"]
    for n in range(NCPU):
        lines.append(f"cpu{n} " + " ".join(str(v // NCPU) for v in cpu) + " 0 0\n")
    lines.append(f"intr {hc['intr']}\n")
    lines.append(f"ctxt {hc['ctxt']}\n")
    lines.append(f"btime {boot}\n")
    lines.append(f"processes {hc['processes']}\n")
    running = 1 + int(hc["util"] * 16)
    lines.append(f"procs_running {running}\n")
    lines.append(f"procs_blocked {int(hc['util'] * 4)}\n")
    writer.write(base / "proc/stat", "".join(lines))
    cached = int(MEM_TOTAL_KB * (0.30 + 0.4 * hc["util"]))
    free = MEM_TOTAL_KB - cached - 12_000_000
    meminfo = [
        ("MemTotal", MEM_TOTAL_KB),
        ("MemFree", free),
        ("MemAvailable", free + cached - 2_000_000),
        ("Buffers", 1_200_000),
        ("Cached", cached),
        ("SwapCached", 0),
        ("Active", cached // 2),
        ("Inactive", cached // 2),
        ("Dirty", int(4096 * hc["util"] * 100)),
        ("Slab", 6_500_000),
        ("SwapTotal", 0),
        ("SwapFree", 0),
    ]
    writer.write(
        base / "proc/meminfo",
        "".join(f"{name + ':':<16}{value:8d} kB\n" for name, value in meminfo),
    )
    load1, load5, load15 = hc["load"]
    writer.write(
        base / "proc/loadavg",
        f"{load1:.2f} {load5:.2f} {load15:.2f} {running}/1400 {hc['processes']}\n",
    )
    writer.write(
        base / "proc/uptime",
        f"{max(0.0, now - server['booted']):.2f} "
        f"{max(0.0, now - server['booted']) * NCPU * 0.95:.2f}\n",
    )
