"""Benchmark of the analytics report: `python -m benchmarks.analytics [--ssus 100]` (`make
bench`).

Writes, into an InfluxDB of its own, what the continuous queries leave for a 100-SSU filesystem
(200 OSSs, 2,400 OSTs): a day of 1-minute means (OST statistics and a job per eight OSTs every
minute, brw_stats I/O sizes every quarter hour; one OSS carries twice the others' load), and the
hour means of 30 days; of the older days' minute means only the first two hours of the week and
of the 30 days, the edges the report reads of them. Then it measures, side by side in the same
run:

- the report of the day, of the week and of 30 days as the API computes it
  (``portal.analytics.services.report``: reading the points it needs, then the maths), first and
  again, held to the goals of issue 34;
- the day's report as a page gets it: kept and renewed by the worker
  (``portal.analytics.cached``), the second request;
- the reference: the day's byte totals per OSS and per job aggregated by InfluxDB alone from the
  minute means (``spread`` per series, summed per server and per job), which gives the totals and
  nothing more (no heat map, no since-when, no advice).

It measures; it never fails on a number.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import BenchInfluxDB, BenchRedis, django_world, record, run_as_main, say

OSTS_PER_SSU = 24
BUCKETS = ((4096, 0.2), (65536, 0.1), (262144, 0.1), (1 << 20, 0.5), (4 << 20, 0.1))
BATCH = 50_000


def write_means(influx, ssus: int, since: int, until: int, origin: int, minutes: bool) -> int:
    """The minute means of [since, until) (``minutes``), else the hour means of each of its
    hours, of counters that started at ``origin``; returns how many points were written. The
    hour means hold no brw_stats: the report reads the I/O sizes at the window's edges only."""
    written = 0
    batch: list[str] = []
    policy = "minute" if minutes else "hour"

    def flush() -> None:
        nonlocal written, batch
        if batch:
            influx.client().write_points(
                batch, protocol="line", time_precision="s", retention_policy=policy
            )
            written += len(batch)
            batch = []

    step = 60 if minutes else 3600
    for t in range(since - since % step, until, step):
        if minutes:
            batch += _lines(ssus, t, t - origin, brw=(t - origin) % 900 == 0)
        elif t + 3600 <= until:
            # The counters grow evenly: an hour's mean is their value at the middle of its
            # minutes (29.5 minutes in).
            batch += _lines(ssus, t, t - origin + 1770, brw=False)
        if len(batch) >= BATCH:
            flush()
    flush()
    return written


def _lines(ssus: int, t: int, elapsed: float, brw: bool) -> list[str]:
    """Every series' means at ``t`` for counters that have run ``elapsed`` seconds."""
    lines = []
    for number in range(ssus * OSTS_PER_SSU):
        server = f"oss{number // 12 + 1:03d}"
        target = f"OST{number:04x}"
        rate = 2.0 if server == "oss001" else 1.0  # MB/s per OST: oss001 twice the rest
        written_bytes = int(rate * 1e6 * elapsed)
        used = 30_000_000 + number * 100 + int(elapsed) // 600
        calls = int(elapsed)
        lines.append(
            f"ost,fs=scratch,server={server},target={target} "
            f"mean_read_bytes={written_bytes // 4},mean_write_bytes={written_bytes},"
            f"mean_read_calls={calls},mean_write_calls={calls * 4},"
            f"mean_kbytes_total=100000000,mean_kbytes_free={100_000_000 - used},"
            f"mean_kbytes_avail={100_000_000 - used} {t}"
        )
        lines.append(
            f"ost_job,fs=scratch,jobid=job{number // 8},server={server},target={target} "
            f"mean_read_bytes={written_bytes // 4},mean_write_bytes={written_bytes},"
            f"mean_read_calls={calls},mean_write_calls={calls * 4} {t}"
        )
        if brw:
            for size, share in BUCKETS:
                ios = int(share * written_bytes / size)
                lines.append(
                    f"brw,bucket={size // 1024}K,fs=scratch,section=disk_io_size,"
                    f"server={server},target={target} mean_read_ios={ios // 4},"
                    f"mean_write_ios={ios} {t}"
                )
    return lines


def influxdb_alone(influx, since: float, until: float) -> tuple[float, int, int]:
    """Bytes per OSS and per job over the window, aggregated by InfluxDB: (seconds, servers,
    jobs)."""
    window = f"time >= {int(since)}s AND time <= {int(until)}s"
    spread = 'spread("mean_read_bytes") + spread("mean_write_bytes") AS "b"'
    statements = [
        f'SELECT sum("b") FROM (SELECT {spread} FROM "minute"."ost" WHERE {window} '
        'GROUP BY "fs", "target", "server") GROUP BY "server"',
        f'SELECT sum("b") FROM (SELECT {spread} FROM "minute"."ost_job" WHERE {window} '
        'GROUP BY "fs", "target", "server", "jobid") GROUP BY "jobid"',
    ]
    started = time.perf_counter()
    servers, jobs = influx.query_tagged(statements, epoch="s")
    return time.perf_counter() - started, len(servers), len(jobs)


# The goals of issue 34, by window and size of rack (seconds).
GOALS = {("24h", 20): 1.0, ("24h", 100): 2.0, ("7d", 100): 3.0, ("30d", 100): 5.0}
WINDOWS = {"24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.analytics", description=__doc__)
    parser.add_argument("--ssus", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--windows", default="24h,7d,30d", help="of 24h, 7d, 30d (comma-separated)")
    args = parser.parse_args(argv)
    windows = [w for w in args.windows.split(",") if w]
    if unknown := [w for w in windows if w not in WINDOWS]:
        parser.error(f"--windows: {', '.join(unknown)} not among {', '.join(WINDOWS)}")

    work = Path(tempfile.mkdtemp(prefix="ostara-analytics-bench-"))
    influxdb, redis = BenchInfluxDB(work), BenchRedis()
    try:  # a stop while they start stops them too
        influxdb.__enter__()
        redis.__enter__()
        os.environ["REDIS_URL"] = redis.url  # where the kept reports are
        django_world(work, influxdb.url, timeout=1200)  # InfluxDB alone takes minutes
        from django.core.management import call_command

        from portal import influxdb as influx

        call_command("influxdb_setup", stdout=io.StringIO())
        say(
            f"Analytics benchmark: {args.ssus} SSUs ({2 * args.ssus} OSSs, "
            f"{OSTS_PER_SSU * args.ssus:,} OSTs), windows {', '.join(windows)}, "
            f"InfluxDB {influx.ping()}"
        )
        end = int(time.time())
        longest = max(WINDOWS[w] for w in windows)
        origin = end - longest - 3600
        started = time.perf_counter()
        points = write_means(influx, args.ssus, end - 86400, end, origin, minutes=True)
        points += write_means(influx, args.ssus, end - longest, end, origin, minutes=False)
        for window in windows:
            if WINDOWS[window] > 86400:  # the edges of the older days' minute means
                since = end - WINDOWS[window]
                points += write_means(influx, args.ssus, since, since + 7200, origin, True)
        say(f"  written: {points:,} points in {time.perf_counter() - started:.0f} s")
        for window in windows:
            _measure(args, window, end)
    finally:
        redis.__exit__()
        influxdb.__exit__()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _measure(args, label: str, end: int) -> None:
    from portal import influxdb as influx
    from portal.analytics import cached, services

    window = services.Window(
        end - WINDOWS[label], end, label if label in cached.REFRESH_SECONDS else ""
    )
    goal = GOALS.get((label, args.ssus))
    for run in range(args.repeat):
        name = (
            f"report of {label} at {args.ssus} SSUs, computed ({'first' if run == 0 else 'again'})"
        )
        started = time.perf_counter()
        try:
            report = services.report(window, None)
        except influx.InfluxError as error:
            say(f"  {name}: no answer after {time.perf_counter() - started:.0f} s ({error})")
            continue
        total = time.perf_counter() - started
        request = report["request"]
        record(name, total, "s", goal)
        say(
            f"  {name:48} {total:6.2f} s = read {request['read_seconds']:.2f} + maths "
            f"{total - request['read_seconds']:.2f}; {request['points']:,} points "
            f"({request['policy']} policy, {request['step']} s steps); overloaded: "
            f"{', '.join(report['overloaded']) or 'none'}; "
            f"{len(report['striping'])} jobs flagged for striping"
        )
    if label != "24h":
        return
    cached.report(window, None)  # computed and kept, as the worker would have
    started = time.perf_counter()
    kept = cached.report(window, None)
    seconds = time.perf_counter() - started
    name = f"report of {label} at {args.ssus} SSUs, kept (a page's answer)"
    record(name, seconds, "s")
    say(f"  {name:48} {seconds:6.2f} s (computed {kept['cached']['age_seconds']:.0f} s before)")
    started = time.perf_counter()
    try:
        seconds, servers, jobs = influxdb_alone(influx, window.since, window.until)
    except influx.InfluxError as error:
        say(f"  InfluxDB alone: no answer after {time.perf_counter() - started:.0f} s ({error})")
        return
    name = f"reference: {label} byte totals by InfluxDB alone"
    record(name, seconds, "s")
    say(f"  {name:48} {seconds:6.2f} s; {servers} OSSs, {jobs} jobs")


if __name__ == "__main__":
    run_as_main(main)
