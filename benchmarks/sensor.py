"""Benchmark of the sensor: `python -m benchmarks.sensor` (`make bench`).

1. CPU of one collection round per OST, on
   a. a tree of 2,400 OSTs generated in a temporary directory from the real Lustre 2.15 sample
      files (stats, brw_stats in debugfs, a 37 KB job_stats of 16 jobs, capacity; NOT the
      virtual rack), with and without its job_stats;
   b. a 100-SSU virtual rack (200 OSS, 2,400 OSTs, the simulator's balanced workload),
   each next to Telegraf's lustre2 input on the same files, when Go is here to build it
   (`go install -tags "custom,inputs.lustre2,outputs.file" .../telegraf@v1.37.2`, cached in
   .run/bench/bin). CPU = user + system seconds of the child process (getrusage).
2. End-to-end ingest into InfluxDB (points/s) through the sensor's sender (batches, gzip,
   HTTP), next to InfluxDB's own ceiling measured in the same run with the same batch size:
   plain pre-built line protocol posted by a minimal keep-alive writer. The InfluxDB is our
   own, started on a free loopback port with deploy/config/influxdb.conf.in in a temporary
   directory and stopped after.

Benchmarks measure; they never fail on a number.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from benchmarks.common import REPO, BenchInfluxDB, say
from benchmarks.rack import build
from sensors.collect import Collector
from sensors.config import SensorConfig
from sensors.sender import InfluxWriter, Sender
from sensors.spool import Spool
from simulator.procfs import TreeWriter
from simulator.rack import Rack

BIN_DIR = REPO / ".run" / "bench" / "bin"
TELEGRAF_VERSION = "v1.37.2"
TELEGRAF_MODULE = f"github.com/influxdata/telegraf/cmd/telegraf@{TELEGRAF_VERSION}"
TELEGRAF_TAGS = "custom,inputs.lustre2,outputs.file"

SAMPLES = "llnl-lmt/2.15.4_1.llnl"
JOB_SAMPLE = (
    "whamcloud-lustrefs-exporter/"
    "lctl-get_param.obdfilter-job_stats.exascaler-2.14.0_ddn.quoted-jobid-hist.txt"
)
CAPACITY = {
    "kbytestotal": "47168367616\n",
    "kbytesfree": "47029440512\n",
    "kbytesavail": "47025124352\n",
    "filestotal": "45927444\n",
    "filesfree": "45927188\n",
    "num_exports": "3\n",
}


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_measured(command: list[str], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    """CPU seconds (user + system) of one child process run to its end."""
    before = child_cpu()
    result = subprocess.run(command, **kwargs)
    return child_cpu() - before, result


# ---------------------------------------------------------------------------------------------
# trees


def build_sample_tree(root: Path, osts: int, job_stats: bool) -> Path:
    """`osts` OSTs in the 2.15 layout, every one with the same real sample files."""
    from sensors.parsers import parse_lctl_get_param
    from sensors.tests import fixture_text
    from sensors.tests.roots import place

    stats = fixture_text(f"{SAMPLES}/obdfilter.lflood-OST0001.stats.txt")
    brw = fixture_text(f"{SAMPLES}/osd-zfs.lflood-OST0000.brw_stats.txt")
    jobs = parse_lctl_get_param(fixture_text(JOB_SAMPLE))[0][1]
    for index in range(osts):
        device = f"bench-OST{index:04x}"
        place(root, f"obdfilter.{device}.stats", stats, "2.15")
        place(root, f"osd-zfs.{device}.brw_stats", brw, "2.15")
        if job_stats:
            place(root, f"obdfilter.{device}.job_stats", jobs, "2.15")
        for name, value in CAPACITY.items():
            place(root, f"obdfilter.{device}.{name}", value, "2.15")
    place(root, "health_check", "healthy\n", "2.15")
    place(root, "lnet.stats", fixture_text(f"{SAMPLES}/lnet.stats.txt"), "2.15")
    return root


def tree_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


# ---------------------------------------------------------------------------------------------
# Telegraf


def telegraf_binary() -> tuple[Path | None, str]:
    """The cached Telegraf with only lustre2, built when missing. (path, note)."""
    binary = BIN_DIR / "telegraf"
    if binary.exists():
        return binary, f"Telegraf {TELEGRAF_VERSION} (cached in {binary.parent})"
    go = shutil.which("go")
    if go is None:
        return None, "Go is not installed here: no Telegraf comparison"
    say(f"  building Telegraf {TELEGRAF_VERSION} with only inputs.lustre2 (about 2.5 min cold)")
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(BIN_DIR)}
    try:
        result = subprocess.run(
            [go, "install", "-tags", TELEGRAF_TAGS, TELEGRAF_MODULE],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    except subprocess.TimeoutExpired:
        return None, "Telegraf build timed out: no Telegraf comparison"
    if result.returncode != 0 or not binary.exists():
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        return None, "Telegraf build failed: " + " | ".join(tail)
    return binary, f"Telegraf {TELEGRAF_VERSION} (built into {binary.parent})"


def telegraf_config(path: Path, roots: str, output: str) -> Path:
    """lustre2 globs over `roots` (a root, or a glob of roots), the 2.15 locations."""
    ost = [
        f"{roots}/proc/fs/lustre/obdfilter/*/stats",
        f"{roots}/proc/fs/lustre/obdfilter/*/job_stats",
        f"{roots}/sys/kernel/debug/lustre/osd-*/*/brw_stats",
    ]
    mds = [f"{roots}/proc/fs/lustre/mdt/*/md_stats", f"{roots}/proc/fs/lustre/mdt/*/job_stats"]
    path.write_text(
        "[agent]\n  omit_hostname = true\n  metric_buffer_limit = 10000000\n"
        "  metric_batch_size = 100000\n"
        "[[inputs.lustre2]]\n"
        f"  ost_procfiles = {json.dumps(ost)}\n"
        f"  mds_procfiles = {json.dumps(mds)}\n"
        f'[[outputs.file]]\n  files = {json.dumps([output])}\n  data_format = "influx"\n'
    )
    return path


def telegraf_cpu(binary: Path, roots: str, work: Path, repeat: int) -> tuple[float, int]:
    """Median CPU of `telegraf --once` over the roots, and the points it wrote."""
    counted = work / "telegraf.out"
    counted.unlink(missing_ok=True)  # the file output appends
    config = telegraf_config(work / "telegraf-count.conf", roots, str(counted))
    subprocess.run([str(binary), "--config", str(config), "--once"], capture_output=True)
    points = sum(1 for _ in open(counted)) if counted.exists() else 0
    config = telegraf_config(work / "telegraf.conf", roots, "/dev/null")
    samples = []
    for _ in range(repeat):
        cpu, result = run_measured(
            [str(binary), "--config", str(config), "--once"], capture_output=True
        )
        if result.returncode != 0:
            raise RuntimeError(result.stderr.strip().splitlines()[-1:])
        samples.append(cpu)
    return statistics.median(samples), points


# ---------------------------------------------------------------------------------------------
# the sensor's collection CPU


def sensor_process_cpu(root: Path, repeat: int) -> tuple[float, int]:
    """Median CPU of `python -m sensors collect --root R --once` and its points."""
    command = [sys.executable, "-m", "sensors", "collect", "--root", str(root), "--once"]
    samples, points = [], 0
    for _ in range(repeat):
        cpu, result = run_measured(command, cwd=REPO, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        samples.append(cpu)
        points = result.stdout.count("\n")
    return statistics.median(samples), points


def sensor_rounds_cpu(root: Path, rounds: int) -> tuple[float, float, int]:
    """In one running agent: CPU of the first round (nothing remembered) and the median of the
    next ones (job blocks unchanged since the last round), and the points of a round."""
    collector = Collector(SensorConfig(root=str(root), server="bench"))
    started = self_cpu()
    points = len(collector.collect(0).lines)
    first = self_cpu() - started
    samples = []
    for number in range(1, rounds):
        started = self_cpu()
        collector.collect(number * 10_000)
        samples.append(self_cpu() - started)
    return first, statistics.median(samples) if samples else first, points


def cpu_table(label: str, osts: int, rows: list[tuple[str, float, int | None]]) -> None:
    say(f"  {label}")
    for name, seconds, points in rows:
        per_ost = seconds / osts * 1000
        extra = f"   {points:>9,} points" if points else ""
        say(f"    {name:<52} {seconds:7.3f} s  {per_ost:7.3f} ms/OST{extra}")


def bench_sample_tree(work: Path, osts: int, repeat: int, telegraf: Path | None) -> None:
    say(f"A. {osts:,} OSTs generated from the Lustre 2.15 sample files (not the virtual rack)")
    for job_stats in (True, False):
        root = work / ("tree-jobs" if job_stats else "tree-nojobs")
        build_sample_tree(root, osts, job_stats)
        what = "with job_stats (16 jobs, 37 KB per OST)" if job_stats else "without job_stats"
        size = tree_bytes(root) / 2**20
        process, points = sensor_process_cpu(root, repeat)
        first, steady, _ = sensor_rounds_cpu(root, 4)
        rows = [
            ("sensor `collect --once` (whole process)", process, points),
            ("sensor agent, first round", first, None),
            ("sensor agent, next rounds (job blocks unchanged)", steady, None),
        ]
        ratio = ""
        if telegraf is not None:
            tg_cpu, tg_points = telegraf_cpu(telegraf, str(root), work, repeat)
            rows.append(("Telegraf lustre2 `--once` (whole process)", tg_cpu, tg_points))
            ratio = f"    sensor / Telegraf (whole processes): {process / tg_cpu:.2f}"
        cpu_table(f"{what}, {size:.0f} MiB of files, median of {repeat}", osts, rows)
        if ratio:
            say(ratio)
        shutil.rmtree(root)


def bench_virtual_rack(work: Path, ssus: int, repeat: int, telegraf: Path | None) -> None:
    rack_dir = work / "rack"
    started = time.time()
    build(rack_dir, ssus)
    writer = TreeWriter()
    with Rack.open(rack_dir, writer=writer) as rack:
        rack.set_scenario("balanced")
        rack.advance(by=10)
        rack.render()
        osts = sum(1 for t in rack.state["targets"].values() if t["kind"] == "OST")
        hosts = sorted(rack.state["servers"])
    built = time.time() - started
    say(
        f"B. virtual rack of {ssus} SSUs: {len(hosts)} servers, {osts:,} OSTs, balanced "
        f"workload (built in {built:.0f} s)"
    )
    roots = [rack_dir / "hosts" / host for host in hosts]
    collectors = [Collector(SensorConfig(root=str(r), server=r.name)) for r in roots]
    started = self_cpu()
    points = sum(len(c.collect(0).lines) for c in collectors)
    first = self_cpu() - started
    steady = []
    for tick in range(1, repeat + 1):
        with Rack.open(rack_dir, writer=writer) as rack:
            rack.advance(by=10)
            rack.render()
        started = self_cpu()
        for collector in collectors:
            collector.collect(tick * 10_000)
        steady.append(self_cpu() - started)
    rows = [
        (f"sensor, {len(hosts)} agents, first round", first, points),
        (
            f"sensor, {len(hosts)} agents, next rounds (after 10 s)",
            statistics.median(steady),
            None,
        ),
    ]
    oss_root = next(r for r in roots if (r / "proc/fs/lustre/obdfilter").is_dir())
    process, _ = sensor_process_cpu(oss_root, repeat)
    host_osts = len(list((oss_root / "proc/fs/lustre/obdfilter").iterdir()))
    if telegraf is not None:
        tg_cpu, tg_points = telegraf_cpu(telegraf, f"{rack_dir}/hosts/*", work, repeat)
        rows.append(("Telegraf lustre2 `--once`, one process over all hosts", tg_cpu, tg_points))
        cpu_table(f"sum over all servers, median of {repeat}", osts, rows)
        say(
            "    sensor / Telegraf (next rounds vs one pass): "
            f"{statistics.median(steady) / tg_cpu:.2f}"
        )
    else:
        cpu_table(f"sum over all servers, median of {repeat}", osts, rows)
    say(
        f"    one server ({oss_root.name}, {host_osts} OSTs): `collect --once` process "
        f"{process:.3f} s (mostly Python start-up)"
    )
    shutil.rmtree(rack_dir)


# ---------------------------------------------------------------------------------------------
# ingest


def post_plain(url: str, database: str, bodies: list[bytes], gzipped: bool = False) -> float:
    """The minimal writer: one keep-alive connection, pre-built bodies. Returns seconds."""
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    path = f"/write?db={database}&precision=ms"
    headers = {"Content-Type": "text/plain"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    started = time.perf_counter()
    for body in bodies:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 204:
            raise RuntimeError(f"InfluxDB answered {response.status}")
    seconds = time.perf_counter() - started
    connection.close()
    return seconds


def bench_ingest(work: Path, osts: int, rounds: int, batch_size: int) -> None:
    root = build_sample_tree(work / "ingest-tree", osts, job_stats=True)
    collector = Collector(SensorConfig(root=str(root), server="bench"))
    stamps = [1_700_000_000_000 + 10_000 * n for n in range(rounds)]
    round_lines = [collector.collect(stamp).lines for stamp in stamps]
    total = sum(len(lines) for lines in round_lines)
    say(
        f"C. ingest into InfluxDB 1.6 (our own instance), {total:,} points "
        f"({rounds} rounds of {osts:,} OSTs), batches of {batch_size:,}"
    )
    with BenchInfluxDB(work) as influxdb:
        for database in ("ceiling", "sensor", "ceiling_again", "ceiling_gzip"):
            influxdb.query(f'CREATE DATABASE "{database}"')
        bodies = []
        for lines in round_lines:
            for start in range(0, len(lines), batch_size):
                chunk = lines[start : start + batch_size]
                bodies.append(("\n".join(chunk) + "\n").encode())
        size = sum(len(body) for body in bodies)
        # Each database starts empty and sees the same series: the first write of a series
        # costs more (index), so each writer pays it once. The ceiling is measured before
        # and after the sensor, to show the drift of the run.
        ceilings = [total / post_plain(influxdb.url, "ceiling", bodies)]
        spool = Spool(str(work / "spool"), 10**10, 10**6)
        sender = Sender(InfluxWriter(influxdb.url, "sensor", timeout=60), spool, batch_size)
        started_cpu, started = self_cpu(), time.perf_counter()
        for lines in round_lines:
            sender.send(lines)
        seconds = time.perf_counter() - started
        sender_cpu = self_cpu() - started_cpu
        ceilings.append(total / post_plain(influxdb.url, "ceiling_again", bodies))
        gzip_bodies = [gzip.compress(body, 1) for body in bodies]
        gzip_ceiling = total / post_plain(influxdb.url, "ceiling_gzip", gzip_bodies, gzipped=True)
        sample = bodies[:5]
        gzipped = sum(len(gzip.compress(body, 1)) for body in sample) / sum(map(len, sample))
        lost = spool.points + spool.rejected_points
        spool.close()
    ceiling = statistics.mean(ceilings)
    say(
        f"    {'InfluxDB ceiling: plain pre-built line protocol':<52} {ceiling:>10,.0f} points/s"
        f"  (before {ceilings[0]:,.0f}, after {ceilings[1]:,.0f})"
    )
    say(
        f"    {'InfluxDB ceiling: the same, pre-built and gzipped':<52} "
        f"{gzip_ceiling:>10,.0f} points/s"
    )
    say(
        f"    {'sensor sender: batch, gzip, HTTP (end to end)':<52} {total / seconds:>10,.0f} "
        f"points/s  ({total / seconds / ceiling:.0%} of plain, "
        f"{total / seconds / gzip_ceiling:.0%} of gzipped)"
    )
    say(
        f"    sender CPU {sender_cpu / total * 1e6:.2f} us/point; body {size / total:.0f} "
        f"bytes/point plain, gzip level 1 to {gzipped:.0%}; not written: {lost}"
    )
    shutil.rmtree(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sensor", description=__doc__)
    parser.add_argument("--osts", type=int, default=2400, help="OSTs of the sample tree")
    parser.add_argument("--ssus", type=int, default=100, help="SSUs of the virtual rack")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="rounds posted in the ingest test")
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--no-telegraf", action="store_true", help="skip building/running it")
    parser.add_argument(
        "--only", choices=["tree", "rack", "ingest"], action="append", help="run only these parts"
    )
    args = parser.parse_args(argv)
    parts = args.only or ["tree", "rack", "ingest"]
    say("sensors benchmark (CPU = user + system seconds; never fails on a number)")
    telegraf, note = (None, "Telegraf skipped (--no-telegraf)")
    if "tree" not in parts and "rack" not in parts:
        note = "Telegraf (not needed for these parts)"
    if not args.no_telegraf and ("tree" in parts or "rack" in parts):
        telegraf, note = telegraf_binary()
    say(f"  reference: {note}")
    work = Path(tempfile.mkdtemp(prefix="ostara-sensors-bench-"))
    try:
        if "tree" in parts:
            bench_sample_tree(work, args.osts, args.repeat, telegraf)
        if "rack" in parts:
            bench_virtual_rack(work, args.ssus, args.repeat, telegraf)
        if "ingest" in parts:
            bench_ingest(work, args.osts, args.rounds, args.batch_size)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
