"""Benchmark of the analytics report: `python -m benchmarks.analytics [--ssus 100] [--hours 24]`
(`make bench`).

Writes a day of 1-minute means for a 100-SSU filesystem (200 OSSs, 2,400 OSTs) into an
InfluxDB of its own, as the continuous queries leave them in the ``minute`` policy: OST
statistics and a job per eight OSTs every minute, brw_stats I/O sizes every quarter hour; one OSS
carries twice the others' load. Then it measures, side by side in the same run:

- the whole report of the day as the API computes it (``portal.analytics.services.report``:
  reading the points it needs, then the maths), first and again;
- the reference: the same byte totals per OSS and per job aggregated by InfluxDB alone
  (``spread`` per series, summed per server and per job), which gives the totals and nothing
  more (no heat map, no since-when, no advice).

It measures; it never fails on a number.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import BenchInfluxDB, django_world, say

OSTS_PER_SSU = 24
BUCKETS = ((4096, 0.2), (65536, 0.1), (262144, 0.1), (1 << 20, 0.5), (4 << 20, 0.1))
BATCH = 50_000


def write_day(influx, ssus: int, hours: int, end: int) -> int:
    """The minute policy's points for the last ``hours``; returns how many were written."""
    start = end - hours * 3600
    start -= start % 60
    written = 0
    batch: list[str] = []

    def flush() -> None:
        nonlocal written, batch
        if batch:
            influx.client().write_points(
                batch, protocol="line", time_precision="s", retention_policy="minute"
            )
            written += len(batch)
            batch = []

    for t in range(start, end, 60):
        elapsed = t - start
        for number in range(ssus * OSTS_PER_SSU):
            server = f"oss{number // 12 + 1:03d}"
            target = f"OST{number:04x}"
            rate = 2.0 if server == "oss001" else 1.0  # MB/s per OST: oss001 twice the rest
            written_bytes = int(rate * 1e6 * elapsed)
            used = 30_000_000 + number * 1000 + elapsed // 60
            batch.append(
                f"ost,fs=scratch,server={server},target={target} "
                f"mean_read_bytes={written_bytes // 4},mean_write_bytes={written_bytes},"
                f"mean_read_calls={elapsed},mean_write_calls={elapsed * 4},"
                f"mean_kbytes_total=100000000,mean_kbytes_free={100_000_000 - used},"
                f"mean_kbytes_avail={100_000_000 - used} {t}"
            )
            batch.append(
                f"ost_job,fs=scratch,jobid=job{number // 8},server={server},target={target} "
                f"mean_read_bytes={written_bytes // 4},mean_write_bytes={written_bytes},"
                f"mean_read_calls={elapsed},mean_write_calls={elapsed * 4} {t}"
            )
            if elapsed % 900 == 0:
                for size, share in BUCKETS:
                    ios = int(share * written_bytes / size)
                    batch.append(
                        f"brw,bucket={size // 1024}K,fs=scratch,section=disk_io_size,"
                        f"server={server},target={target} mean_read_ios={ios // 4},"
                        f"mean_write_ios={ios} {t}"
                    )
            if len(batch) >= BATCH:
                flush()
    flush()
    return written


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.analytics", description=__doc__)
    parser.add_argument("--ssus", type=int, default=100)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="ostara-analytics-bench-"))
    influxdb = BenchInfluxDB(work).__enter__()
    try:
        django_world(work, influxdb.url, timeout=1200)  # InfluxDB alone takes minutes
        from django.core.management import call_command

        from portal import influxdb as influx
        from portal.analytics import services

        call_command("influxdb_setup", stdout=io.StringIO())
        say(
            f"Analytics benchmark: {args.ssus} SSUs ({2 * args.ssus} OSSs, "
            f"{OSTS_PER_SSU * args.ssus:,} OSTs), {args.hours} h of 1-minute means, "
            f"InfluxDB {influx.ping()}"
        )
        end = int(time.time())
        started = time.perf_counter()
        points = write_day(influx, args.ssus, args.hours, end)
        say(f"  written: {points:,} points in {time.perf_counter() - started:.0f} s")
        window = services.Window(end - args.hours * 3600, end, "")
        for run in range(args.repeat):
            label = "first" if run == 0 else "again"
            started = time.perf_counter()
            try:
                report = services.report(window, None)
            except influx.InfluxError as error:
                say(
                    f"  Ostara report, {label}: no answer after "
                    f"{time.perf_counter() - started:.0f} s ({type(error).__name__})"
                )
            else:
                total = time.perf_counter() - started
                request = report["request"]
                say(
                    f"  Ostara report, {label}{'':22}{total:6.2f} s = read "
                    f"{request['read_seconds']:.2f} + maths {total - request['read_seconds']:.2f}; "
                    f"{request['points']:,} points ({request['policy']} policy, "
                    f"{request['step']} s steps); overloaded: "
                    f"{', '.join(report['overloaded']) or 'none'}; "
                    f"{len(report['striping'])} jobs flagged for striping"
                )
            if run:
                continue  # the reference once: it takes minutes at 100 SSUs
            started = time.perf_counter()
            try:
                seconds, servers, jobs = influxdb_alone(influx, window.since, window.until)
            except influx.InfluxError as error:
                say(
                    f"  InfluxDB alone: no answer after {time.perf_counter() - started:.0f} s "
                    f"({type(error).__name__})"
                )
            else:
                say(
                    f"  InfluxDB alone (bytes per OSS and per job)  {seconds:6.2f} s; "
                    f"{servers} OSSs, {jobs} jobs"
                )
    finally:
        influxdb.__exit__()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
