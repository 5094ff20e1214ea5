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
   plain pre-built line protocol posted by a minimal keep-alive writer, and the same bodies
   pre-built and gzipped (what InfluxDB pays to inflate them). The writers take turns over
   several rounds (the order reversed every other round), each into a new empty database on
   a quiet InfluxDB, dropped after; the medians, their spread and the ratio of the medians
   are reported against the goal of issue 17 (the sender at >= 90 % of the plain ceiling),
   with where the sender's time goes. The InfluxDB is our own, started on a free loopback
   port with deploy/config/influxdb.conf.in in a temporary directory and stopped after.

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
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from benchmarks.common import REPO, BenchInfluxDB, record, run_as_main, say
from benchmarks.rack import build
from sensors.collect import Collector
from sensors.config import SensorConfig
from sensors.sender import GZIP_LEVEL, InfluxWriter, Sender
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
PLAIN, GZIPPED, SENDER = "plain", "gzipped", "sender"
WRITER_LABELS = {
    PLAIN: "InfluxDB ceiling: plain pre-built line protocol",
    GZIPPED: "InfluxDB ceiling: the same, pre-built and gzipped",
    SENDER: "sensor sender: batch, gzip, HTTP (end to end)",
}
INGEST_GOAL = 0.90  # issue 17: the sender reaches 90 % of InfluxDB's own ceiling

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
    from sensors.sample_trees import place
    from sensors.sample_trees import sample_text as fixture_text

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
        jobs = "with" if job_stats else "without"
        record(f"sensor, {osts:,} OSTs {jobs} job_stats: `collect --once` CPU", process, "s")
        record(f"sensor, {osts:,} OSTs {jobs} job_stats: agent's next rounds CPU", steady, "s")
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
    record(
        f"sensor, virtual rack of {ssus} SSUs: all agents' next rounds CPU",
        statistics.median(steady),
        "s",
    )
    say(
        f"    one server ({oss_root.name}, {host_osts} OSTs): `collect --once` process "
        f"{process:.3f} s (mostly Python start-up)"
    )
    shutil.rmtree(rack_dir)


# ---------------------------------------------------------------------------------------------
# ingest


def post_plain(url: str, database: str, bodies: list[bytes], gzipped: bool = False) -> None:
    """The minimal writer: one keep-alive connection, pre-built bodies."""
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    path = f"/write?db={database}&precision=ms"
    headers = {"Content-Type": "text/plain"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    for body in bodies:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 204:
            raise RuntimeError(f"InfluxDB answered {response.status}")
    connection.close()


class IngestRun(NamedTuple):
    seconds: float
    client_cpu: float  # seconds of this process (the writer)
    influxd_cpu: float  # seconds of influxd


def timed_write(influxdb: BenchInfluxDB, database: str, write: Callable[[str], None]) -> IngestRun:
    """One writer into a database of its own, created empty on a quiet InfluxDB and dropped
    after: every writer pays the same series-creation cost and none pays for another's
    snapshots and compactions. influxd's CPU counts until it is quiet again, so a slower
    writer is not charged more of the background work its points cause."""
    influxdb.query(f'CREATE DATABASE "{database}"')
    influxdb.settle()
    client, server, started = self_cpu(), influxdb.cpu_seconds(), time.perf_counter()
    write(database)
    seconds = time.perf_counter() - started
    client = self_cpu() - client
    influxdb.settle()
    run = IngestRun(seconds, client, influxdb.cpu_seconds() - server)
    influxdb.query(f'DROP DATABASE "{database}"')
    return run


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):>10,.0f}  ({min(values):,.0f} to {max(values):,.0f})"


def bench_ingest(work: Path, osts: int, rounds: int, batch_size: int, repeat: int) -> None:
    root = build_sample_tree(work / "ingest-tree", osts, job_stats=True)
    collector = Collector(SensorConfig(root=str(root), server="bench"))
    stamps = [1_700_000_000_000 + 10_000 * n for n in range(rounds)]
    round_lines = [collector.collect(stamp).lines for stamp in stamps]
    total = sum(len(lines) for lines in round_lines)
    bodies = []
    for lines in round_lines:
        for start in range(0, len(lines), batch_size):
            chunk = lines[start : start + batch_size]
            bodies.append(("\n".join(chunk) + "\n").encode())
    gzip_bodies = [gzip.compress(body, GZIP_LEVEL) for body in bodies]
    size, gzip_size = sum(map(len, bodies)), sum(map(len, gzip_bodies))
    say(
        f"C. ingest into InfluxDB 1.6 (our own instance), {total:,} points "
        f"({rounds} rounds of {osts:,} OSTs), batches of {batch_size:,}; {repeat} alternating "
        "rounds, each writer into a new empty database on a quiet InfluxDB"
    )
    lost = 0

    def sender(database: str) -> None:
        nonlocal lost
        spool = Spool(str(work / f"spool-{database}"), 10**10, 10**6)
        sender = Sender(InfluxWriter(influxdb.url, database, timeout=60), spool, batch_size)
        for lines in round_lines:
            sender.send(lines)
        lost += spool.points + spool.rejected_points
        spool.close()

    writers = {
        PLAIN: lambda database: post_plain(influxdb.url, database, bodies),
        GZIPPED: lambda database: post_plain(influxdb.url, database, gzip_bodies, gzipped=True),
        SENDER: sender,
    }
    runs: dict[str, list[IngestRun]] = {name: [] for name in writers}
    with BenchInfluxDB(work) as influxdb:
        for number in range(repeat):
            # Reversed every other round, so no writer always follows the same one.
            order = list(writers) if number % 2 == 0 else list(reversed(writers))
            for name in order:
                runs[name].append(timed_write(influxdb, f"{name}_{number}", writers[name]))
            rates = ", ".join(f"{name} {total / runs[name][-1].seconds:,.0f}" for name in writers)
            say(f"    round {number + 1}: {rates} points/s")
    rates = {name: [total / run.seconds for run in runs[name]] for name in writers}
    medians = {name: statistics.median(rates[name]) for name in writers}
    cpu = {name: IngestCost.of(runs[name], total) for name in writers}
    for name, label in WRITER_LABELS.items():
        say(
            f"    {label:<52} {spread(rates[name])} points/s; CPU us/point: "
            f"writer {cpu[name].writer:.2f}, influxd {cpu[name].influxd:.2f}"
        )
    ratio = medians[SENDER] / medians[PLAIN]
    paired = {  # each round's writers ran back to back: their ratio cancels slower drifts
        (a, b): statistics.median(x / y for x, y in zip(rates[a], rates[b], strict=True))
        for a, b in ((SENDER, PLAIN), (GZIPPED, PLAIN), (SENDER, GZIPPED))
    }
    verdict = "met" if ratio >= INGEST_GOAL else "NOT met"
    record("sensor sender ingest", medians[SENDER], "points/s", lower_is_better=False)
    record(
        "sensor sender / InfluxDB's plain ceiling",
        100 * ratio,
        "%",
        goal=100 * INGEST_GOAL,
        lower_is_better=False,
    )
    say(
        f"    sender / plain ceiling: {ratio:.0%} (ratio of medians; median of the rounds' own "
        f"ratios {paired[SENDER, PLAIN]:.0%}), goal >= {INGEST_GOAL:.0%}: {verdict}"
    )
    say(
        f"    sender / gzipped ceiling: {medians[SENDER] / medians[GZIPPED]:.0%} (rounds "
        f"{paired[SENDER, GZIPPED]:.0%}); gzipped / plain ceiling: "
        f"{medians[GZIPPED] / medians[PLAIN]:.0%} (rounds {paired[GZIPPED, PLAIN]:.0%})"
    )
    by_cpu = cpu[PLAIN].total / cpu[SENDER].total
    say(
        f"    by CPU per point (writer + influxd; steadier than points/s on a shared machine): "
        f"sender at {by_cpu:.0%} of the plain ceiling, "
        f"{cpu[GZIPPED].total / cpu[SENDER].total:.0%} of the gzipped one"
    )
    noise = (max(rates[PLAIN]) - min(rates[PLAIN])) / medians[PLAIN]
    say(f"    cause: {ingest_cause(ratio, by_cpu, cpu, noise)}")
    say(
        f"    body {size / total:.0f} bytes/point plain, gzip level {GZIP_LEVEL} to "
        f"{gzip_size / size:.0%}; not written: {lost}"
    )
    shutil.rmtree(root)


class IngestCost(NamedTuple):
    """Median CPU microseconds per point of one writer and of influxd serving it."""

    writer: float
    influxd: float

    @property
    def total(self) -> float:
        return self.writer + self.influxd

    @classmethod
    def of(cls, runs: list[IngestRun], points: int) -> IngestCost:
        return cls(
            statistics.median(run.client_cpu for run in runs) / points * 1e6,
            statistics.median(run.influxd_cpu for run in runs) / points * 1e6,
        )


def ingest_cause(ratio: float, by_cpu: float, cpu: dict[str, IngestCost], noise: float) -> str:
    """Why the sender falls short of the plain ceiling, or that it does not: its own work or
    gzip, which InfluxDB inflates (inherent while the sender gzips), when its CPU per point
    says so; otherwise other load on the shared machine."""
    own = cpu[SENDER].writer - cpu[PLAIN].writer
    inflate = cpu[GZIPPED].influxd - cpu[PLAIN].influxd
    costs = (
        f"next to the plain writer the sender spends {own:+.2f} us/point of its own CPU (line "
        f"joins, gzip level {GZIP_LEVEL}, HTTP) and influxd {inflate:+.2f} us/point to inflate "
        f"gzip, against influxd's {cpu[PLAIN].influxd:.2f} us/point for plain line protocol"
    )
    if ratio >= INGEST_GOAL:
        return f"none, the goal is met; {costs}"
    if by_cpu >= INGEST_GOAL:
        return (
            f"noise: by CPU per point the sender is at {by_cpu:.0%}, the rest is other load on "
            f"the shared machine (the plain ceiling spreads {noise:.0%} from round to round); "
            f"{costs}"
        )
    if own > inflate:
        return f"the sender's own work: {costs}"
    return f"inherent, gzip: {costs}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sensor", description=__doc__)
    parser.add_argument("--osts", type=int, default=2400, help="OSTs of the sample tree")
    parser.add_argument("--ssus", type=int, default=100, help="SSUs of the virtual rack")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="rounds posted in the ingest test")
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument(
        "--ingest-repeat", type=int, default=7, help="alternating rounds of the ingest writers"
    )
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
            bench_ingest(work, args.osts, args.rounds, args.batch_size, args.ingest_repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    run_as_main(main)
