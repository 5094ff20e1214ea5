"""The workload model: each step of the clock, the running jobs' I/O turned into kernel counters.

The jobs come from the scenario (`simulator/scenarios.py`): each moves `rate` bytes per second
over the OSTs it is striped on as long as they can take it. Each step of the clock turns that
into the kernel's counters (`simulator/counter_store.py`): obdfilter stats and job_stats per OST,
each client's export stats, brw_stats histograms, md_stats and MDT job_stats, ptlrpc service
stats, LNet and CPU counters per server, OST fill and inode use, and what each job's owners
hold on each target (simulator.quota). Bandwidth is capped by the performance model (per OST,
per RAID controller, per server), so a hot OSS saturates and a degraded group is slow.
"""

from __future__ import annotations

import math
import random

from simulator import counters as C
from simulator import perf, quota, rebuilds
from simulator.counter_store import (
    apply_clears,
    expire_job_stats,
    export_counters,
    host_counters,
    target_counters,
)
from simulator.santricity import stats as array_stats
from simulator.scenarios import (
    FILL_LIMIT,
    MiB,
    job_total_traffic,
    ost_targets,
    seed_fill,
    spawn_jobs,
)

PAGE = 4096
# The part of an OST I/O's service time spent in the server (OSS, HBA, SAS) rather than the array.
SERVER_US = 150.0


def advance(state: dict, store: dict, now: float) -> None:
    """Move the clock to `now`, doing the workload's I/O for the elapsed time."""
    apply_clears(state, store)
    dt = now - state["clock"]
    if dt <= 0:
        return
    state["ticks"] = state.get("ticks", 0) + 1
    rng = random.Random(f"{state['seed']}:{state['ticks']}")
    if not state.get("fill_seeded"):
        seed_fill(state, rng)
        state["fill_seeded"] = True
    osts = ost_targets(state)
    spawn_jobs(state, rng, now, osts)

    serving: dict[str, str] = {}
    for target in state["targets"].values():
        host = target.get("mounted_on")
        if host and state["servers"][host]["state"] == "up":
            target_counters(store, target, now)
            if state["servers"][host]["lnet_link_up"] and perf.is_target_usable(state, target):
                serving[target["label"]] = host

    bandwidth = {
        label: (
            perf.ost_bandwidth(state, state["targets"][label], "write") * 1e6,
            perf.ost_bandwidth(state, state["targets"][label], "read") * 1e6,
        )
        for label in serving
    }
    flows = _plan_flows(state, dt, serving, bandwidth)
    # An array's own added service time (`inject array-slow`) on each target's volume.
    array_us = {
        label: perf.array_delay_ms(state, state["targets"][label]) * 1000 for label in serving
    }
    # What each target's volume did this step, as its array measures it (the REST API).
    volume_io: dict[str, list[float]] = {}
    host_bytes: dict[str, list[float]] = {h: [0.0, 0.0, 0, 0] for h in state["servers"]}
    # Writes, not reads: a job that can still read but not write (its OSTs are full) stalls.
    written_before = {job_id: sum(job["on_ost"].values()) for job_id, job in state["jobs"].items()}
    for (job_id, label), (write_bytes, read_bytes) in flows.items():
        job = state["jobs"][job_id]
        target = state["targets"][label]
        _do_io(
            store,
            job,
            target,
            write_bytes,
            read_bytes,
            now,
            host_bytes,
            bandwidth[label][0],
            dt,
            array_us[label],
            volume_io.setdefault(label, [0.0] * 6),
        )
    for job_id, job in state["jobs"].items():
        # A job whose stripes cannot move (ENOSPC, or its OSTs are gone) gives up eventually.
        written = sum(job["on_ost"].values())
        job["stalled"] = job.get("stalled", 0) + 1 if written == written_before[job_id] else 0

    _metadata(state, store, now, dt, rng)
    _finish_jobs(state, store, now)
    _background(state, store, now, dt, serving, host_bytes)
    expire_job_stats(store, now)
    rebuilds.advance(state, dt)
    array_stats.record(state, volume_io, now, dt)
    state["clock"] = now


def _plan_flows(state: dict, dt: float, serving: dict[str, str], bandwidth: dict) -> dict:
    """Bytes each job moves on each OST in this step, after the hardware caps."""
    wanted: dict[tuple[str, str], list[float]] = {}
    for job_id, job in state["jobs"].items():
        share = job["rate"] * dt / max(1, len(job["osts"]))
        left = max(0.0, job_total_traffic(job) - job["moved"])
        share = min(share, left / max(1, len(job["osts"])))
        for label in job["osts"]:
            if label in serving and share > 0:
                r = job["read_fraction"]
                wanted[(job_id, label)] = [share * (1 - r), share * r]

    # Per-OST cap: time = w/bw_w + r/bw_r must fit in dt; filling stops at 95 %.
    per_ost: dict[str, list[float]] = {}
    for (_job_id, label), (w, r) in wanted.items():
        acc = per_ost.setdefault(label, [0.0, 0.0])
        acc[0] += w
        acc[1] += r
    scale: dict[str, tuple[float, float]] = {}
    host_load: dict[str, float] = {}
    ctrl_load: dict[tuple[str, str], float] = {}
    ctrl_of: dict[str, tuple[str, str] | None] = {}
    limit = FILL_LIMIT if state["scenario"] == "filling" else 1.0
    for label, (w, r) in per_ost.items():
        target = state["targets"][label]
        bw_w, bw_r = bandwidth[label]
        busy = (w / bw_w if bw_w else math.inf) + (r / bw_r if bw_r else math.inf)
        f = min(1.0, dt / busy) if busy > 0 else 1.0
        room = max(0.0, (target["total_kib"] * limit - target["used_kib"]) * 1024)
        wf = min(1.0, room / (w * f)) if w * f > 0 else 1.0
        scale[label] = (f * wf, f)
        load = w * f * wf + r * f
        host = serving[label]
        host_load[host] = host_load.get(host, 0.0) + load
        ctrl = ctrl_of[label] = perf.target_controller(state, target)
        if ctrl:
            ctrl_load[ctrl] = ctrl_load.get(ctrl, 0.0) + load
    host_factor = {
        h: min(1.0, perf.host_ceiling(state, h) * 1e6 * dt / load) if load else 1.0
        for h, load in host_load.items()
    }
    ceilings = perf.controller_ceilings(state)
    ctrl_factor = {
        c: min(1.0, ceilings[c] * 1e6 * dt / load) if load else 1.0 for c, load in ctrl_load.items()
    }
    flows = {}
    for (job_id, label), (w, r) in wanted.items():
        ctrl = ctrl_of[label]
        g = min(host_factor[serving[label]], ctrl_factor.get(ctrl, 1.0) if ctrl else 1.0)
        scale_w, scale_r = scale[label]
        flows[(job_id, label)] = (w * scale_w * g, r * scale_r * g)
    return flows


def _latency_us(bandwidth: float, io_size: int, util: float) -> float:
    bw = max(1.0, bandwidth / 1e6)
    return 250.0 + io_size / (bw * 1e6) * 1e6 * (1.0 + 2.0 * util)


def _do_io(
    store, job, target, write_bytes, read_bytes, now, host_bytes, bandwidth, dt, array_us, seen
) -> None:
    """`array_us`: the array's added service time per I/O; `seen` accumulates what the array
    measured ([read ops, write ops, read bytes, write bytes, read µs, write µs] summed)."""
    io = job["io_size"]
    n_w = int(write_bytes // io)
    n_r = int(read_bytes // io)
    if n_w == 0 and n_r == 0:
        return
    label = target["label"]
    entry = store["targets"][label]
    util = min(1.0, (n_w + n_r) * io / max(1.0, bandwidth * dt))
    latency = _latency_us(bandwidth, io, util) + array_us
    stats = entry["stats"]
    jobs = entry["jobs"]
    # The client's own counters on this OST (exports/<nid>/stats), as the target counts them.
    xc = export_counters(entry, job["client"], now)["c"]
    job_entry = jobs.get(job["id"])
    if job_entry is None:
        job_entry = jobs[job["id"]] = {
            "start": now,
            "last": now,
            "c": C.new_counters(C.OST_COUNTERS),
        }
        for counters in (job_entry["c"], stats, xc):
            C.add_spread(counters["punch"], 1, 120)
    job_entry["last"] = now
    jc = job_entry["c"]
    hist = entry["brw"]
    pages_bucket = C.log2_bucket(min(io, 4 * MiB) // PAGE)
    disk_io = min(io, 1 * MiB)
    ios_per_rpc = max(1, io // disk_io)
    size_bucket = C.log2_bucket(disk_io)
    time_bucket = C.log2_bucket(latency / 1000.0 * 4)
    inflight = max(1, min(31, int(1 + util * 14)))
    for direction, n, name in ((1, n_w, "write"), (0, n_r, "read")):
        if n == 0:
            continue
        C.add_same(stats[f"{name}_bytes"], n, io)
        # Reads are served partly from the controller cache: shorter than writes.
        op_latency = latency if direction else latency * 0.6
        C.add_spread(stats[name], n, op_latency)
        C.add_same(jc[f"{name}_bytes"], n, io)
        C.add_spread(jc[name], n, op_latency)
        C.add_same(xc[f"{name}_bytes"], n, io)
        C.add_spread(xc[name], n, op_latency)
        # The array sees the I/O without the server's own part of its service time.
        seen[direction] += n
        seen[2 + direction] += n * io
        seen[4 + direction] += n * max(50.0, op_latency - SERVER_US)
        hist[C.BRW_PAGES * 2 + direction][pages_bucket] += n
        hist[C.BRW_DISCONT_PAGES * 2 + direction][0] += n
        hist[C.BRW_DISCONT_BLOCKS * 2 + direction][0] += n
        hist[C.BRW_FRAGS * 2 + direction][min(31, ios_per_rpc)] += n
        disk_ios = n * ios_per_rpc
        hist[C.BRW_SIZE * 2 + direction][size_bucket] += disk_ios
        hist[C.BRW_TIME * 2 + direction][time_bucket] += disk_ios
        spread = hist[C.BRW_INFLIGHT * 2 + direction]
        low = max(1, inflight - 1)
        third = disk_ios // 3
        spread[low] += third
        spread[inflight] += disk_ios - 2 * third
        spread[min(31, inflight + 1)] += third
    moved_w = n_w * io
    moved_r = n_r * io
    job["moved"] += moved_w + moved_r
    job["written"] += moved_w
    job["on_ost"][target["label"]] = job["on_ost"].get(target["label"], 0) + moved_w
    target["used_kib"] = min(target["total_kib"], target["used_kib"] + moved_w // 1024)
    quota.charge(target, job, kib=moved_w // 1024)
    acc = host_bytes[target["mounted_on"]]
    acc[0] += moved_w
    acc[1] += moved_r
    acc[2] += n_w
    acc[3] += n_r


def _metadata(state: dict, store: dict, now: float, dt: float, rng: random.Random) -> None:
    """Opens and creates when a job starts, getattr/statfs while it runs (MDT side)."""
    for job in state["jobs"].values():
        mdt = state["targets"].get(job["mdt"]) if job["mdt"] else None
        if not mdt or not mdt.get("mounted_on"):
            continue
        if state["servers"][mdt["mounted_on"]]["state"] != "up":
            continue
        entry = target_counters(store, mdt, now)
        job_entry = entry["jobs"].get(job["id"])
        if job_entry is None:
            job_entry = entry["jobs"][job["id"]] = {
                "start": now,
                "last": now,
                "c": C.new_counters(C.MDT_COUNTERS),
            }
        job_entry["last"] = now
        ops: dict[str, tuple[int, float]] = {}
        if not job["opened"]:
            job["opened"] = True
            files = job["files"]
            ops.update(
                open=(files, 310.0),
                mknod=(files, 290.0),
                setattr=(files, 30.0),
                getxattr=(max(1, files // 10), 20.0),
            )
            mdt["files_used"] = min(mdt["files_total"], mdt["files_used"] + files)
            quota.charge(mdt, job, inodes=files)
            for label in job["osts"]:
                ost = state["targets"][label]
                ost["files_used"] = min(ost["files_total"], ost["files_used"] + files)
                quota.charge(ost, job, inodes=files)
                ost_entry = store["targets"].get(label)
                if ost_entry is not None:
                    C.add_spread(ost_entry["stats"]["create"], max(1, files // 32), 900.0)
        ops["getattr"] = (max(1, int(dt * rng.uniform(0.5, 3.0))), 25.0)
        ops["statfs"] = (max(1, int(dt / 5)), 3.0)
        export = export_counters(entry, job["client"], now)["c"]
        for name, (n, latency) in ops.items():
            C.add_spread(job_entry["c"][name], n, latency)
            C.add_spread(entry["stats"][name], n, latency)
            C.add_spread(export[name], n, latency)


def _finish_jobs(state: dict, store: dict, now: float) -> None:
    keep_files = state["scenario"] == "filling"
    for job_id in list(state["jobs"]):
        job = state["jobs"][job_id]
        stuck = job.get("stalled", 0) >= 3 and any(
            state["targets"][label]["used_kib"]
            >= FILL_LIMIT * state["targets"][label]["total_kib"] * 0.999
            for label in job["osts"]
        )
        # Done when what is left is less than one I/O per stripe.
        left = job_total_traffic(job) - job["moved"]
        if left >= job["io_size"] * len(job["osts"]) and not stuck:
            continue
        mdt = state["targets"].get(job["mdt"]) if job["mdt"] else None
        mdt_entry = store["targets"].get(job["mdt"]) if job["mdt"] else None
        close_ops = {"close": (job["files"], 20.0)}
        if not keep_files:
            close_ops["unlink"] = (job["files"], 260.0)
            for label, written in job["on_ost"].items():
                ost = state["targets"][label]
                ost["used_kib"] = max(0, ost["used_kib"] - written // 1024)
                ost["files_used"] = max(0, ost["files_used"] - job["files"])
                quota.charge(ost, job, kib=-(written // 1024), inodes=-job["files"])
                ost_entry = store["targets"].get(label)
                if ost_entry is not None:
                    C.add_spread(ost_entry["stats"]["destroy"], job["files"], 180.0)
                    jobs = ost_entry["jobs"]
                    if job_id in jobs:
                        C.add_spread(jobs[job_id]["c"]["destroy"], job["files"], 180.0)
                        C.add_spread(jobs[job_id]["c"]["sync"], 1, 2500.0)
                        jobs[job_id]["last"] = now
            if mdt:
                mdt["files_used"] = max(0, mdt["files_used"] - job["files"])
                quota.charge(mdt, job, inodes=-job["files"])
        if mdt_entry is not None and job_id in mdt_entry["jobs"]:
            export = export_counters(mdt_entry, job["client"], now)["c"]
            for name, (n, latency) in close_ops.items():
                C.add_spread(mdt_entry["jobs"][job_id]["c"][name], n, latency)
                C.add_spread(mdt_entry["stats"][name], n, latency)
                C.add_spread(export[name], n, latency)
            mdt_entry["jobs"][job_id]["last"] = now
        del state["jobs"][job_id]


def _background(state, store, now, dt, serving, host_bytes) -> None:
    """statfs from the MDS and clients, pings, CPU, LNet and service counters."""
    n_clients = max(1, len(state["clients"]))
    for target in state["targets"].values():
        if target["label"] not in serving:
            continue
        entry = store["targets"][target["label"]]
        if target["kind"] == "OST":
            C.add_spread(entry["stats"]["statfs"], max(1, int(dt)), 3.0)
            C.add_spread(entry["stats"]["set_info"], max(1, int(dt / 10)), 4.0)
            C.add_spread(entry["stats"]["get_info"], 1 if dt >= 30 else 0, 40.0)
        elif target["kind"] == "MDT":
            C.add_spread(entry["stats"]["statfs"], max(1, int(dt)), 2.0)
    for host, server in state["servers"].items():
        if server["state"] != "up":
            continue
        hc = host_counters(store, server)
        written, read, n_w, n_r = host_bytes.get(host, (0.0, 0.0, 0, 0))
        ceiling = perf.host_ceiling(state, host) * 1e6 * dt
        util = min(1.0, (written + read) / ceiling) if ceiling else 0.0
        hc["util"] = util
        ncpu = 32
        jiffies = int(dt * 100 * ncpu)
        busy = int(jiffies * (0.015 + 0.45 * util))
        cpu = hc["cpu"]
        cpu[0] += busy // 10
        cpu[2] += busy * 6 // 10
        cpu[4] += busy * 2 // 10
        cpu[6] += busy // 10
        cpu[3] += max(0, jiffies - busy)
        hc["ctxt"] += int(dt * (2000 + 40000 * util))
        hc["intr"] += int(dt * (1500 + 30000 * util))
        hc["processes"] += int(dt / 5)
        target_load = 0.1 + util * 24
        for i, period in enumerate((60.0, 300.0, 900.0)):
            alpha = math.exp(-dt / period)
            hc["load"][i] = hc["load"][i] * alpha + target_load * (1 - alpha)
        small = int(dt * n_clients / 25) + int(dt)  # pings and statfs RPCs
        lnet = hc["lnet"]
        lnet[1] = max(lnet[1], 8 + int(util * 120))
        lnet[3] += n_r + small  # send_count
        lnet[4] += n_w + small  # recv_count
        lnet[7] += int(read) + small * 224
        lnet[8] += int(written) + small * 224
        svc = hc["svc"]
        if server["role"] == "oss":
            io = svc["ost_io"]
            if n_w:
                C.add_spread(io["ost_write"], n_w, 3000.0 * (1 + util))
            if n_r:
                C.add_spread(io["ost_read"], n_r, 1800.0 * (1 + util))
            reqs = n_w + n_r
            if reqs:
                C.add_spread(io["req_waittime"], reqs, 30.0 + 200 * util)
                C.add_samples(
                    io["req_qdepth"],
                    reqs,
                    0,
                    int(util * 8),
                    int(reqs * util * 2),
                    int(reqs * (util * 2) ** 2) + reqs,
                )
                C.add_samples(
                    io["req_active"],
                    reqs,
                    1,
                    1 + int(util * 40),
                    int(reqs * (1 + util * 16)),
                    int(reqs * (1 + util * 16) ** 2),
                )
                C.add_same(io["req_timeout"], reqs, 15)
                C.add_samples(
                    io["reqbuf_avail"], reqs * 2, 60, 64, reqs * 2 * 63, reqs * 2 * 63 * 63
                )
            ost = svc["ost"]
            pings = max(1, int(dt * n_clients / 25))
            C.add_spread(ost["obd_ping"], pings, 8.0)
            C.add_spread(ost["req_waittime"], pings, 12.0)
            C.add_same(ost["req_timeout"], pings, 15)
            statfs = max(1, int(dt * len(server["mounts"])))
            C.add_spread(svc["ost_create"]["ost_statfs"], statfs, 25.0)
            C.add_spread(svc["ost_create"]["req_waittime"], statfs, 10.0)
        else:
            mdt_svc = svc["mdt"]
            pings = max(1, int(dt * n_clients / 25))
            C.add_spread(mdt_svc["obd_ping"], pings, 8.0)
            C.add_spread(mdt_svc["req_waittime"], pings, 15.0)
            C.add_same(mdt_svc["req_timeout"], pings, 15)
            C.add_spread(mdt_svc["mds_statfs"], max(1, int(dt)), 20.0)
