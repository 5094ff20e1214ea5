"""Each virtual server's root directory, laid out as a Lustre 2.15 server's.

`DIR/hosts/<host>/` holds what a sensor started with `--root DIR/hosts/<host>` reads where a
real one reads `/`:

| path | what |
| --- | --- |
| `proc/fs/lustre/obdfilter/<ost>/{stats,job_stats,recovery_status}` | OST counters (procfs) |
| `proc/fs/lustre/mdt/<mdt>/{md_stats,job_stats,recovery_status}` | MDT counters (procfs) |
| `proc/fs/lustre/{obdfilter,mdt}/<target>/exports/<nid>/stats` | each client's (procfs) |
| `proc/fs/lustre/osd-ldiskfs/<target>/quota_slave/acct_{user,group,project}` | owners (procfs) |
| `proc/fs/lustre/qmt/<fs>-QMT0000/{dt,md}-0x0/glb-{usr,grp,prj}` | quota limits (MDT0000's) |
| `sys/fs/lustre/{version,health_check}` | node-wide (sysfs) |
| `sys/fs/lustre/obdfilter/<ost>/{kbytes*,files*,num_exports,tot_*}` | OST capacity (sysfs) |
| `sys/fs/lustre/mdt/<mdt>/{kbytes*,files*,num_exports}` | MDT capacity (sysfs) |
| `sys/fs/lustre/osd-ldiskfs/<target>/{kbytes*,files*,fstype,mntdev,blocksize}` | OSD (sysfs) |
| `sys/kernel/debug/lustre/osd-ldiskfs/<target>/brw_stats` | brw_stats (debugfs, 2.15) |
| `sys/kernel/debug/lustre/ost/OSS/{ost,ost_io,ost_create}/stats` | OSS services (debugfs) |
| `sys/kernel/debug/lustre/mds/MDS/mdt/stats` | MDS service (debugfs) |
| `sys/kernel/debug/lnet/stats` | LNet counters (debugfs) |
| `sys/fs/lustre/{osd-ldiskfs,osp,ost/OSS/ost_io,...}/...` (`osc/` links) | simulator.tunables |
| `proc/{stat,meminfo,loadavg,mounts}`, `proc/sys/kernel/random/boot_id` | the node |
| `dev/kmsg` | the kernel log (simulator.kernel_log) |
| `dev/mapper/<volume>` | multipath devices visible to the server (empty files) |
| `bin/` | the virtual commands (see simulator/commands) |

A server that is down has no Lustre tree at all (nothing mounted, modules not loaded).
`TreeWriter` writes a file only when its text changed, always by atomic rename.
"""

from __future__ import annotations

import os
import shutil
import zlib
from pathlib import Path

from simulator import counters as C
from simulator import kernel_log, quota
from simulator import tunables as T
from simulator.counter_store import host_counters, target_counters
from simulator.state import write_atomic
from simulator.topology import NCPU, host_volumes, target_health

LUSTRE_VERSION = "2.15.4"
# Files the sensor reads every 30 s or more (a target's per-client export stats, its owners'
# accounting) are brought up to date at most this often: thousands of them change every
# refresh on a busy rack (simulated seconds; a new process writes them at once).
SLOW_SECONDS = 30.0
MEM_TOTAL_KB = 196_608_000
# Recovery after a remount or failover: clients reconnect over the window (the kernel log's
# `Will be in recovery for at least 2:30`, then `Recovery over after 2:30`).
RECOVERY_WINDOW = float(kernel_log.RECOVERY_SECONDS)


class TreeWriter:
    """Writes files under host roots, skipping those whose text did not change.

    Keeps, for the life of one process (`serve` keeps one for all refreshes), the text last
    written to each path and the formatted job_stats blocks, so unchanged files cost nothing.
    """

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}
        self.job_text: dict = {}
        self.links: set[str] = set()
        self.written = 0
        # When each group of slow files (a target's export stats, its accounting) was last
        # brought up to date (simulated seconds).
        self.slow: dict[str, float] = {}

    def due(self, key: str, now: float) -> bool:
        """Whether the slow files under directory `key` are to be brought up to date now
        (SLOW_SECONDS)."""
        last = self.slow.get(key)
        if last is not None and 0 <= now - last < SLOW_SECONDS:
            return False
        # Written now; the next time a share of SLOW_SECONDS of its own earlier, so the groups
        # of a busy rack take turns instead of all falling due at the same refresh.
        turn = (zlib.crc32(key.encode()) % 1000) / 1000 * SLOW_SECONDS if last is None else 0.0
        self.slow[key] = now - turn
        return True

    def write(self, path: Path | str, text: str) -> None:
        path = str(path)
        if self.cache.get(path) == text:
            return
        write_atomic(path, text)
        self.cache[path] = text
        self.written += 1

    def link(self, path: str, target: str) -> None:
        """A symlink (made once) from `path` to `target`, relative to path's directory."""
        if path in self.links:
            return
        if not os.path.islink(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.exists(path):
                os.unlink(path)
            os.symlink(target, path)
        self.links.add(path)

    def forget(self, prefix: Path | str) -> None:
        prefix = str(prefix).rstrip("/") + "/"
        for path in [p for p in self.cache if p.startswith(prefix)]:
            del self.cache[path]
        self.links = {p for p in self.links if not p.startswith(prefix)}
        self.slow = {p: t for p, t in self.slow.items() if not f"{p}/".startswith(prefix)}
        if len(self.job_text) > 100_000:
            self.job_text.clear()


def host_root(rack_root: Path, host: str) -> Path:
    return rack_root / "hosts" / host


TREE_DIRS = ("proc", "sys", "dev")


def tree_base(rack_root: Path, state: dict, host: str, writer: TreeWriter) -> Path:
    """Where a server's proc/, sys/ and dev/ are written. In place by default; with
    `state["trees"]` set (serve --trees-in-memory) they live on a memory filesystem, as the
    real /proc and /sys do, and the host root links to them."""
    trees = state.get("trees")
    if not trees:
        return host_root(rack_root, host)
    base = Path(trees) / host
    root = host_root(rack_root, host)
    for name in TREE_DIRS:
        link = str(root / name)
        if link in writer.links:
            continue
        target = base / name
        target.mkdir(parents=True, exist_ok=True)
        if os.path.islink(link):
            if os.readlink(link) != str(target):
                os.unlink(link)
        elif os.path.isdir(link):
            shutil.rmtree(link)
        if not os.path.islink(link):
            os.makedirs(root, exist_ok=True)
            os.symlink(target, link)
        writer.links.add(link)
    return base


def _remove(path: Path, writer: TreeWriter) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    writer.forget(path)


def _prune(parent: Path, keep: set[str], writer: TreeWriter) -> None:
    """Remove the per-target directories of targets no longer mounted here."""
    try:
        names = os.listdir(parent)
    except FileNotFoundError:
        return
    for name in names:
        if name not in keep:
            _remove(parent / name, writer)


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
        f"recovery_duration: {int(RECOVERY_WINDOW)}\n"
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


CAPACITY_FILES = ("kbytestotal", "kbytesfree", "kbytesavail", "filestotal", "filesfree")


def _capacity_files(directory: str, target: dict, writer: TreeWriter) -> None:
    total = target["total_kib"]
    free = max(0, total - target["used_kib"])
    reserve = total * (5 if target["kind"] != "OST" else 17) // 1000
    files_free = max(0, target["files_total"] - target["files_used"])
    writer.write(f"{directory}/kbytestotal", f"{total}\n")
    writer.write(f"{directory}/kbytesfree", f"{free}\n")
    writer.write(f"{directory}/kbytesavail", f"{max(0, free - reserve)}\n")
    writer.write(f"{directory}/filestotal", f"{target['files_total']}\n")
    writer.write(f"{directory}/filesfree", f"{files_free}\n")


def render_host(
    rack_root: Path, state: dict, store: dict, host: str, writer: TreeWriter, now: float
) -> None:
    """Bring one server's tree in line with the state and counters at time `now`."""
    server = state["servers"][host]
    base_path = tree_base(rack_root, state, host, writer)
    base = str(base_path)
    proc_lustre = f"{base}/proc/fs/lustre"
    sys_lustre = f"{base}/sys/fs/lustre"
    debug = f"{base}/sys/kernel/debug"
    if server["state"] != "up":
        for path in (proc_lustre, sys_lustre, f"{debug}/lustre", f"{debug}/lnet", f"{base}/dev"):
            _remove(Path(path), writer)
        writer.write(f"{base}/proc/mounts", _base_mounts())
        return

    mounted = [state["targets"][label] for label in sorted(server["mounts"])]
    osts = [t for t in mounted if t["kind"] == "OST"]
    mdts = [t for t in mounted if t["kind"] == "MDT"]
    keep_osts = {t["label"] for t in osts}
    keep_mdts = {t["label"] for t in mdts}
    keep_osd = {t["label"] for t in mounted}
    _prune(Path(proc_lustre, "obdfilter"), keep_osts, writer)
    _prune(Path(sys_lustre, "obdfilter"), keep_osts, writer)
    _prune(Path(proc_lustre, "mdt"), keep_mdts, writer)
    _prune(Path(sys_lustre, "mdt"), keep_mdts, writer)
    _prune(Path(sys_lustre, "osd-ldiskfs"), keep_osd, writer)
    _prune(Path(debug, "lustre/osd-ldiskfs"), keep_osd, writer)

    writer.write(f"{sys_lustre}/version", f"{LUSTRE_VERSION}\n")
    writer.write(
        f"{sys_lustre}/health_check", "healthy\n" if host_healthy(state, host) else "NOT HEALTHY\n"
    )
    exports = len(state["clients"]) + 2

    for target in mounted:
        label = target["label"]
        kind = target["kind"]
        osd = f"{sys_lustre}/osd-ldiskfs/{label}"
        brw = f"{debug}/lustre/osd-ldiskfs/{label}/brw_stats"
        if kind == "MGT":
            # The MGS has an OSD of its own, with an empty brw_stats.
            _capacity_files(osd, target, writer)
            start = target.get("mounted_at") or now
            writer.write(brw, C.format_brw_stats(now, start, C.new_histograms()))
        else:
            entry = target_counters(store, target, now)
            obd = "obdfilter" if kind == "OST" else "mdt"
            proc_dir = f"{proc_lustre}/{obd}/{label}"
            sys_dir = f"{sys_lustre}/{obd}/{label}"
            names = C.OST_COUNTERS if kind == "OST" else C.MDT_COUNTERS
            stats_name = "stats" if kind == "OST" else "md_stats"
            writer.write(
                f"{proc_dir}/{stats_name}",
                C.format_stats(now, entry["start"], entry["stats"], names),
            )
            writer.write(
                f"{proc_dir}/job_stats",
                C.format_job_stats(entry["jobs"], names, writer.job_text, label),
            )
            writer.write(f"{proc_dir}/recovery_status", recovery_status(state, target, now))
            _exports(proc_dir, label, entry, names, writer, now)
            _capacity_files(sys_dir, target, writer)
            writer.write(f"{sys_dir}/num_exports", f"{exports}\n")
            if kind == "OST":
                writer.write(f"{sys_dir}/tot_granted", f"{exports * 64 * 1024 * 1024}\n")
                writer.write(f"{sys_dir}/tot_dirty", "0\n")
                writer.write(f"{sys_dir}/tot_pending", "0\n")
            # The OSD reports the same statfs as the target above it: one file, two names.
            for name in CAPACITY_FILES:
                writer.link(f"{osd}/{name}", f"../../{obd}/{label}/{name}")
            writer.write(brw, C.format_brw_stats(now, entry["brw_start"], entry["brw"]))
        writer.write(f"{osd}/fstype", "ldiskfs\n")
        writer.write(f"{osd}/mntdev", f"{target['device']}\n")
        writer.write(f"{osd}/blocksize", "4096\n")

    _quota_files(proc_lustre, state, mounted, writer, now)

    # Values set with `lctl set_param` (or by the MGS's params log: at each target mount and
    # each `set_param -P`) stay until the server reboots or their target remounts.
    _params(base, state, host, writer)

    hc = host_counters(store, server)
    if server["role"] == "mds":
        services, service_dir = C.MDS_SERVICES, f"{debug}/lustre/mds/MDS"
    else:
        services, service_dir = C.OSS_SERVICES, f"{debug}/lustre/ost/OSS"
    for name, ops in services.items():
        writer.write(
            f"{service_dir}/{name}/stats",
            C.format_stats(now, hc["svc_start"], hc["svc"][name], C.SERVICE_GENERIC + ops),
        )
    writer.write(f"{debug}/lnet/stats", " ".join(str(v) for v in hc["lnet"]) + "\n")
    _node_files(base, server, hc, now, writer)
    _devices(base_path, state, host, writer)
    writer.write(f"{base}/dev/kmsg", kernel_log.records_text(server))
    writer.write(
        f"{base}/proc/mounts",
        _base_mounts()
        + "".join(
            f"{t['device']} {t['mountpoint']} lustre {mount_options(state, t)} 0 0\n"
            for t in mounted
        ),
    )


def _exports(proc_dir: str, label: str, entry: dict, names, writer: TreeWriter, now: float) -> None:
    """`exports/<nid>/stats` of each client that sent the target a request since its mount (the
    same counters as the target's own), every SLOW_SECONDS. An export's text is made again only
    when its counters moved: its snapshot_time is that of its last request, so an idle client's
    file costs nothing."""
    if not writer.due(f"{proc_dir}/exports", now):
        return
    exports = entry.get("exports", {})
    _prune(Path(proc_dir, "exports"), set(exports), writer)
    for nid, export in exports.items():
        key = ("export", label, nid)
        cached = writer.job_text.get(key)
        if cached is None or cached[0] != export["last"] or cached[1] != export["start"]:
            text = C.format_stats(export["last"], export["start"], export["c"], names)
            cached = writer.job_text[key] = (export["last"], export["start"], text)
        writer.write(f"{proc_dir}/exports/{nid}/stats", cached[2])


def _quota_files(
    proc_lustre: str, state: dict, mounted: list[dict], writer: TreeWriter, now: float
) -> None:
    """Each target's accounting per owner (its OSD's quota_slave, every SLOW_SECONDS), and on
    the server of MDT0000 the quota master's indexes of its filesystem (simulator.quota)."""
    targets = [t for t in mounted if t["kind"] != "MGT"]
    _prune(Path(proc_lustre, "osd-ldiskfs"), {t["label"] for t in targets}, writer)
    masters = sorted({t["fsname"] for t in targets if t["kind"] == "MDT" and t["index"] == 0})
    _prune(Path(proc_lustre, "qmt"), {f"{fs}-QMT0000" for fs in masters}, writer)
    for target in targets:
        directory = f"{proc_lustre}/osd-ldiskfs/{target['label']}/quota_slave"
        if not writer.due(directory, now):
            continue
        for kind, table in quota.accounting(target).items():
            writer.write(f"{directory}/{quota.ACCT_FILES[kind]}", quota.acct_text(kind, table))
    for fsname in masters:
        # What the owners use only matters to those with limits (their `granted`).
        limited = any(quota.master(state, fsname)["limits"].values())
        usage = quota.filesystem_usage(state, fsname) if limited else dict.fromkeys(quota.KINDS, {})
        for resource in ("dt", "md"):
            directory = f"{proc_lustre}/qmt/{fsname}-QMT0000/{resource}-0x0"
            for kind, name in quota.GLB_NAMES.items():
                writer.write(
                    f"{directory}/glb-{name}",
                    quota.glb_text(state, fsname, kind, resource, usage[kind]),
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
        writer.write(f"{mapper}/{name}", "")


def _node_files(base: str, server: dict, hc: dict, now: float, writer: TreeWriter) -> None:
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
    writer.write(f"{base}/proc/stat", "".join(lines))
    writer.write(
        f"{base}/proc/sys/kernel/random/boot_id",
        kernel_log.boot_id(server["hostname"], server["booted"]) + "\n",
    )
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
        f"{base}/proc/meminfo",
        "".join(f"{name + ':':<16}{value:8d} kB\n" for name, value in meminfo),
    )
    load1, load5, load15 = hc["load"]
    writer.write(
        f"{base}/proc/loadavg",
        f"{load1:.2f} {load5:.2f} {load15:.2f} {running}/1400 {hc['processes']}\n",
    )
    writer.write(
        f"{base}/proc/uptime",
        f"{max(0.0, now - server['booted']):.2f} "
        f"{max(0.0, now - server['booted']) * NCPU * 0.95:.2f}\n",
    )


def _params(base: str, state: dict, host: str, writer: TreeWriter) -> None:
    """Write every tunable of a running server: its value set, else its default."""
    table = T.tunables(state, host)
    values = state["servers"][host].get("params", {})
    for rel, tunable in table.items():
        writer.write(f"{base}/{rel}", values.get(rel, tunable.default) + "\n")
    sys_lustre = Path(base, "sys/fs/lustre")
    osps = {rel.split("/")[4] for rel in table if rel.startswith(T.OSP_DIR + "/")}
    _prune(sys_lustre / "osp", osps, writer)
    for name in os.listdir(sys_lustre / "osc") if (sys_lustre / "osc").is_dir() else []:
        if name not in osps:
            _remove(sys_lustre / "osc" / name, writer)
            writer.links.discard(str(sys_lustre / "osc" / name))
    for name in osps:
        writer.link(f"{sys_lustre}/osc/{name}", f"../osp/{name}")
    namespaces = {rel.split("/")[5] for rel in table if rel.startswith(T.NAMESPACES_DIR + "/")}
    _prune(Path(base, T.NAMESPACES_DIR), namespaces, writer)


class _ComparingWriter(TreeWriter):
    """A TreeWriter with no memory of earlier writes: it compares with the file instead."""

    def write(self, path: Path | str, text: str) -> None:
        try:
            with open(path) as handle:
                if handle.read() == text:
                    return
        except OSError:
            pass
        super().write(path, text)


def refresh_params(rack_root: Path, state: dict, host: str) -> None:
    """Bring a running server's tunables in line with the state before lctl reads them (the
    MDS's OSP devices of OSTs formatted since its tree was last written, for one)."""
    if state["servers"][host]["state"] != "up":
        return
    writer = _ComparingWriter()
    _params(str(tree_base(rack_root, state, host, writer)), state, host, writer)
