"""The kernel-style counters of each mounted target and each server, kept between refreshes.

One store (a dict pickled to `counters.pickle` in the rack directory, owned by the clock) holds,
per target, its obdfilter stats or md_stats, job_stats and brw_stats histograms with the time
they started, and per server its CPU, LNet and ptlrpc service counters. A target's counters
start from zero when it is mounted, a server's when it boots, as the kernel's do; `lctl
set_param ...stats=clear` (recorded in the rack state) restarts one file's counters.
`simulator/workload.py` makes them grow; `procfs.py` and the commands print them.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from simulator import counters as C
from simulator.state import write_atomic

COUNTERS_FILE = "counters.pickle"
# job_stats entries vanish after this many seconds without activity (job_cleanup_interval).
JOB_CLEANUP_INTERVAL = 600


def load_counters(root: Path) -> dict:
    path = root / COUNTERS_FILE
    if path.exists():
        with open(path, "rb") as handle:
            return pickle.load(handle)
    return {"targets": {}, "hosts": {}}


def save_counters(root: Path, store: dict) -> None:
    write_atomic(root / COUNTERS_FILE, pickle.dumps(store, protocol=pickle.HIGHEST_PROTOCOL))


def target_counters(store: dict, target: dict, now: float) -> dict:
    """The counters of a mounted target, created at mount time (zero, like a new obd)."""
    label = target["label"]
    entry = store["targets"].get(label)
    mount_id = (target.get("mounted_on"), target.get("mounted_at"))
    if entry is None or entry["mount"] != list(mount_id):
        start = target.get("mounted_at") or now
        names = C.MDT_COUNTERS if target["kind"] == "MDT" else C.OST_COUNTERS
        entry = {
            "mount": list(mount_id),
            "start": start,
            "stats": C.new_counters(names),
            "jobs": {},
            "exports": {},
            "brw": C.new_histograms(),
            "brw_start": start,
        }
        store["targets"][label] = entry
    return entry


def export_counters(entry: dict, client: str, now: float) -> dict:
    """A client's own stats on a target (`exports/<nid>/stats`), from its first request since
    the target was mounted: {"start", "last", "c": counters}."""
    exports = entry.setdefault("exports", {})
    export = exports.get(client)
    if export is None:
        names = C.MDT_COUNTERS if "open" in entry["stats"] else C.OST_COUNTERS
        export = exports[client] = {"start": now, "last": now, "c": C.new_counters(names)}
    export["last"] = now
    return export


def host_counters(store: dict, server: dict) -> dict:
    """Per-server counters, reset when the server boots."""
    entry = store["hosts"].get(server["hostname"])
    if entry is None or entry["boot"] != server["booted"]:
        services = C.MDS_SERVICES if server["role"] == "mds" else C.OSS_SERVICES
        entry = {
            "boot": server["booted"],
            "cpu": [0] * 8,  # user nice system idle iowait irq softirq steal (jiffies)
            "ctxt": 0,
            "intr": 0,
            "processes": 1000,
            "lnet": [0] * 11,
            "svc": {
                name: C.new_counters(C.SERVICE_GENERIC + ops) for name, ops in services.items()
            },
            "svc_start": server["booted"],
            "load": [0.05, 0.05, 0.05],
            "util": 0.0,
        }
        store["hosts"][server["hostname"]] = entry
    return entry


def clear_stats(store: dict, label: str, what: str, now: float) -> None:
    """`lctl set_param obdfilter.X.stats=clear` (or md_stats, job_stats, brw_stats): that
    file's counters restart from zero, as writing to them does in the kernel."""
    entry = store["targets"].get(label)
    if not entry:
        return
    if what in ("stats", "md_stats"):
        for counter in entry["stats"].values():
            counter[:] = C.new_counter()
        entry["start"] = now
    elif what == "job_stats":
        entry["jobs"] = {}
    elif what == "brw_stats":
        entry["brw"] = C.new_histograms()
        entry["brw_start"] = now


def apply_clears(state: dict, store: dict) -> None:
    for key, when in sorted(state.get("stats_cleared", {}).items()):
        label, _, what = key.partition("/")
        clear_stats(store, label, what, when)
    state["stats_cleared"] = {}


def expire_job_stats(store: dict, now: float) -> None:
    """Forget the job_stats entries of jobs idle for longer than job_cleanup_interval."""
    for entry in store["targets"].values():
        jobs = entry["jobs"]
        stale = [j for j, job in jobs.items() if now - job["last"] > JOB_CLEANUP_INTERVAL]
        for job_id in stale:
            del jobs[job_id]
