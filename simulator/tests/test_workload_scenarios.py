"""Each named workload scenario leaves its signature in the numbers a sensor reads."""

from __future__ import annotations

from collections import defaultdict

from sensors import parsers
from simulator.rack import Rack


def bytes_per_ost(root):
    """read+write bytes per (server, OST) from the obdfilter stats files."""
    result = {}
    for host_dir in sorted((root / "hosts").iterdir()):
        obdfilter = host_dir / "proc/fs/lustre/obdfilter"
        if not obdfilter.is_dir():
            continue
        for ost in obdfilter.iterdir():
            counters = parsers.parse_stats((ost / "stats").read_text())["counters"]
            total = sum(counters[n]["sum"] for n in ("read_bytes", "write_bytes") if n in counters)
            result[(host_dir.name, ost.name)] = total
    return result


def window(root, scenario, *, warmup=3, steps=6, step=10.0, hot=None):
    with Rack.open(root) as rack:
        rack.set_scenario(scenario, hot)
        for _ in range(warmup):
            rack.advance(by=step)
        rack.render()
    before = bytes_per_ost(root)
    with Rack.open(root) as rack:
        for _ in range(steps):
            rack.advance(by=step)
        rack.render()
    after = bytes_per_ost(root)
    return {k: after[k] - before.get(k, 0) for k in after}


def shares(delta):
    per_server = defaultdict(int)
    for (host, _ost), value in delta.items():
        per_server[host] += value
    total = sum(per_server.values())
    return {h: v / total for h, v in per_server.items()}


def test_idle_moves_no_data(built_rack):
    delta = window(built_rack, "idle")
    assert sum(delta.values()) == 0


def test_balanced_spreads_bytes_evenly(built_rack):
    share = shares(window(built_rack, "balanced"))
    assert set(share) == {"oss01", "oss02"}
    mean = 1 / len(share)
    assert all(0.7 * mean < s < 1.3 * mean for s in share.values())


def test_hot_oss_carries_far_more_than_its_share(built_rack):
    share = shares(window(built_rack, "hot-oss", hot="oss02"))
    mean = sum(share.values()) / len(share)
    assert share["oss02"] > 1.5 * mean
    assert max(share, key=share.get) == "oss02"


def test_bad_striping_puts_each_big_job_on_one_ost(built_rack):
    window(built_rack, "bad-striping")
    osts_of_job = defaultdict(set)
    bytes_of_job = defaultdict(int)
    for obdfilter in built_rack.glob("hosts/*/proc/fs/lustre/obdfilter/*"):
        for job in parsers.parse_job_stats((obdfilter / "job_stats").read_text()):
            read, written = parsers.job_bytes(job)
            if read + written:
                osts_of_job[job["job_id"]].add(obdfilter.name)
                bytes_of_job[job["job_id"]] += read + written
    single = [j for j, osts in osts_of_job.items() if len(osts) == 1]
    assert len(single) >= 3
    # the single-stripe jobs carry most of the bytes
    assert sum(bytes_of_job[j] for j in single) > 0.5 * sum(bytes_of_job.values())
    assert min(bytes_of_job[j] for j in single) > 1 << 30


def fills(root):
    values = {}
    for sysdir in root.glob("hosts/*/sys/fs/lustre/obdfilter/*"):
        total = int((sysdir / "kbytestotal").read_text())
        free = int((sysdir / "kbytesfree").read_text())
        values[sysdir.name] = 1 - free / total
    return values


def test_filling_heads_for_95_percent_and_stops(built_rack):
    with Rack.open(built_rack) as rack:
        rack.set_scenario("filling")
        rack.advance(by=10)
        rack.render()
    first = fills(built_rack)
    assert 0.75 < sum(first.values()) / len(first) < 0.9
    history = []
    with Rack.open(built_rack) as rack:
        for _ in range(12):
            rack.advance(by=3600)
            rack.render()
            history.append(fills(built_rack))
    means = [sum(f.values()) / len(f) for f in history]
    assert all(b >= a - 1e-9 for a, b in zip(means, means[1:], strict=False))
    assert means[-1] > 0.94
    assert max(max(f.values()) for f in history) <= 0.9501


def small_io_share(root):
    """Share of disk I/Os below 64 KiB in the brw_stats of every OST."""
    small = total = 0
    for brw in root.glob("hosts/*/sys/kernel/debug/lustre/osd-*/*/brw_stats"):
        rows = parsers.parse_brw_stats(brw.read_text())["sections"].get("disk_io_size", {})
        for bucket, row in rows.items():
            ios = row["read_ios"] + row["write_ios"]
            total += ios
            if bucket.endswith("K") and int(bucket[:-1]) < 64:
                small += ios
    return small / total if total else 0.0


def small_io_reads_and_writes(root):
    """Disk I/Os below 64 KiB in the brw_stats of every OST: (reads, writes)."""
    reads = writes = 0
    for brw in root.glob("hosts/*/sys/kernel/debug/lustre/osd-*/*/brw_stats"):
        rows = parsers.parse_brw_stats(brw.read_text())["sections"].get("disk_io_size", {})
        for bucket, row in rows.items():
            if bucket.endswith("K") and int(bucket[:-1]) < 64:
                reads += row["read_ios"]
                writes += row["write_ios"]
    return reads, writes


def test_demo_mix_has_a_hot_oss_a_narrow_job_and_small_io(built_rack):
    share = shares(window(built_rack, "demo"))
    # the first OSS carries its pool's jobs: well above its partner
    assert share["oss01"] > 1.5 * share["oss02"]
    osts_of_job = defaultdict(set)
    bytes_of_job = defaultdict(int)
    for obdfilter in built_rack.glob("hosts/*/proc/fs/lustre/obdfilter/*"):
        for job in parsers.parse_job_stats((obdfilter / "job_stats").read_text()):
            read, written = parsers.job_bytes(job)
            if read + written:
                osts_of_job[job["job_id"]].add(obdfilter.name)
                bytes_of_job[job["job_id"]] += read + written
    narrow = [j for j, osts in osts_of_job.items() if len(osts) == 1 and bytes_of_job[j] > 1 << 30]
    assert narrow, "a large single-stripe job"
    assert small_io_share(built_rack) > 0.05
    # Small files are written, and some read back: the analytics report showed the same count
    # of small reads and writes (4,739,361 each), as if one were counted twice.
    reads, writes = small_io_reads_and_writes(built_rack)
    assert 0 < reads < writes


def _workload(rack_dir, *args):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "simulator", "workload", "--rack", str(rack_dir), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_workload_job_puts_one_large_file_on_one_ost(built_rack):
    assert _workload(built_rack, "idle").returncode == 0
    done = _workload(built_rack, "job", "--stripe-count", "1", "--size", "1T", "--rate", "300M")
    assert done.returncode == 0, done.stderr
    assert "1,024 GiB at 300 MiB/s" in done.stdout
    with Rack.open(built_rack) as rack:
        for _ in range(6):
            rack.advance(by=10)
        rack.render()
    moved = {k: v for k, v in bytes_per_ost(built_rack).items() if v}
    assert len(moved) == 1  # every byte on the one OST of its single stripe
    (written,) = moved.values()
    assert 0.9 * 60 * 300 * 2**20 < written <= 60 * 300 * 2**20 * 1.01


def test_workload_job_on_one_server_and_a_fill_skew(built_rack):
    assert _workload(built_rack, "idle").returncode == 0
    done = _workload(built_rack, "job", "--stripe-count", "2", "--server", "oss01")
    assert done.returncode == 0, done.stderr
    with Rack.open(built_rack) as rack:
        job = next(iter(rack.state["jobs"].values()))
        assert all(rack.state["targets"][t]["mounted_on"] == "oss01" for t in job["osts"])
        before = {t["label"]: t["used_kib"] for t in rack.state["targets"].values()}
    skew = _workload(built_rack, "fill-skew", "--count", "2", "--points", "40")
    assert skew.returncode == 0, skew.stderr
    with Rack.open(built_rack) as rack:
        fuller = [t for t in rack.state["targets"].values() if t["used_kib"] > before[t["label"]]]
    assert len(fuller) == 2
    assert all(t["used_kib"] - before[t["label"]] >= 0.39 * t["total_kib"] for t in fuller)


def test_workload_refuses_what_it_cannot_do(built_rack):
    bad = _workload(built_rack, "job", "--server", "nosuch")
    assert bad.returncode != 0 and "unknown server nosuch" in bad.stderr
    size = _workload(built_rack, "job", "--size", "lots")
    assert size.returncode == 2 and "'lots' is not a size" in size.stderr
