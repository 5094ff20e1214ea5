"""The analytics report of a window, as JSON; and, run as a command, the same report of a file.

    python -m portal.analytics.report FILE [--margin 0.25] [--small-io 65536] [--fs NAME]

FILE (or ``-``) holds InfluxDB line protocol as the sensors write it and as ``influx_inspect
export -lponly`` exports it: measurements ``ost``, ``ost_job`` and ``brw`` with at least two
timestamps per series (other measurements and export comments are passed over). Counters are
cumulative, so the window is last minus first per series; a counter that went down restarted
and counts from zero. The report is printed as one JSON object: ``oss`` (server, bytes,
share), ``imbalance`` (max_over_mean, cov), ``overloaded``, ``ost_fill`` (spread_points,
flagged), ``striping`` (flagged jobs), ``io_size`` (small_share), and more detail beside them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable

from portal.analytics import capacity, maths
from sensors.lineproto import LineError, decode

USED = ("ost", "ost_job", "ost_client", "brw")
# influx_inspect prints these around the points of an export.
_EXPORT_HEADERS = ("# DDL", "# DML", "# CONTEXT-")
# Seconds per unit of a line-protocol timestamp, by its number of digits (s, ms, us, ns).
_PRECISIONS = ((17, 1e-9), (14, 1e-6), (11, 1e-3), (0, 1.0))


class ReportInputError(ValueError):
    """A line of the input that cannot be used; the message names the line."""


def read_points(lines: Iterable[str], fs: str | None = None) -> list[maths.Point]:
    points = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#") or text.startswith(_EXPORT_HEADERS):
            continue
        if text.startswith(("CREATE DATABASE", "CREATE RETENTION POLICY")):
            continue  # the DDL section of an influx_inspect export
        try:
            measurement, tags, fields, timestamp = decode(text)
        except LineError as error:
            raise ReportInputError(f"line {number}: {error}") from None
        if measurement not in USED:
            continue
        if timestamp is None:
            raise ReportInputError(f"line {number}: a point without a timestamp")
        if fs is not None and tags.get("fs") != fs:
            continue
        points.append(maths.make_point(measurement, tags, fields, _seconds(timestamp)))
    return points


def _seconds(timestamp: int) -> float:
    digits = len(str(abs(timestamp)))
    return timestamp * next(scale for width, scale in _PRECISIONS if digits >= width)


def build_report(
    points: list[maths.Point],
    *,
    margin: float = maths.DEFAULT_OVERLOAD_MARGIN,
    small_io: float = maths.DEFAULT_SMALL_IO_BYTES,
    capacity_warning: float = 80.0,
    capacity_critical: float = 95.0,
    filesystem_osts: int | None = None,
    fill_threshold: float = maths.QOS_THRESHOLD_RR_POINTS,
    striping_min_bytes: float = maths.STRIPING_MIN_BYTES,
    bytes_per_stripe: float = maths.STRIPING_BYTES_PER_STRIPE,
    group_of: dict[str, str] | None = None,
    columns: int = 60,
    heatmap_ost_rows: int = 48,
    min_step: float = 1.0,
) -> dict:
    """The whole report of a window's points (see the module docstring). ``group_of`` maps a
    server to its SSU, for each server's share of its SSU; ``columns`` cuts the window into
    the heat maps' steps, none shorter than ``min_step`` (the points' own step: a cell between
    two points would be empty)."""
    points = maths.Points(points)
    labels = {
        maths.target_label(p.tag("fs"), p.tag("target")) for p in points if p.measurement == "ost"
    }
    totals = maths.server_bytes(points)
    balance = maths.imbalance(totals, margin)
    times = [p.time for p in points]
    since, until = (min(times), max(times)) if times else (0.0, 0.0)
    step = max(min_step, (until - since) / columns) if times else min_step
    in_ssu = maths.group_shares(totals, group_of) if group_of else {}
    since_when = maths.overloaded_since(
        points, balance.overloaded, since, until, step, margin, min_step
    )
    osts = maths.heatmap(points, "target", since, until, step, min_step)
    osts["rows"] = osts["rows"][:heatmap_ost_rows]
    return {
        "window": {"since": since, "until": until} if times else None,
        "oss": [
            {
                "server": s.server,
                "bytes": s.bytes,
                "share": s.share,
                **(
                    {"ssu": group_of.get(s.server), "ssu_share": in_ssu.get(s.server)}
                    if group_of
                    else {}
                ),
            }
            for s in balance.shares
        ],
        "imbalance": {"max_over_mean": balance.max_over_mean, "cov": balance.cov},
        "overloaded": balance.overloaded,
        "overload_margin": margin,
        "overloaded_detail": [
            {
                "server": server,
                "since": since_when.get(server),
                "top_jobs": maths.top_jobs(points, server),
                "osts": _busiest_osts(points, server),
            }
            for server in balance.overloaded
        ],
        "ost_fill": maths.ost_fill(points, fill_threshold),
        "striping": maths.striping(
            points, filesystem_osts or len(labels), striping_min_bytes, bytes_per_stripe
        ),
        "io_size": maths.io_sizes(points, small_io, group_of),
        "top_jobs": maths.top_jobs(points),
        "top_jobs_by_ops": maths.top_jobs(points, by="ops"),
        "top_clients": maths.top_clients(points),
        "top_clients_by_ops": maths.top_clients(points, by="ops"),
        "capacity": capacity.capacity_forecast(points, capacity_warning, capacity_critical),
        "heatmap": {
            "oss": maths.heatmap(points, "server", since, until, step, min_step),
            "ost": osts,
        },
    }


def _busiest_osts(points: list[maths.Point], server: str, limit: int = 4) -> list[dict]:
    """The OSTs of a server that moved the most, with the jobs on each."""
    moved = maths.target_bytes(points, server)
    busiest = sorted((m, label) for label, m in moved.items() if m > 0)[::-1][:limit]
    return [
        {"target": label, "bytes": m, "top_jobs": maths.top_jobs(points, target=label, limit=5)}
        for m, label in busiest
    ]


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value > 1:
        value /= 100  # given as a percentage
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a fraction (0.25) or a percentage (25)")
    return value


def _bytes(text: str) -> float:
    scale = {"K": 1024, "M": 2**20}.get(text[-1:].upper(), 1)
    number = text[:-1] if scale != 1 else text
    try:
        value = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (65536, 64K, 1M)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the size must be positive")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m portal.analytics.report",
        description="Print the analytics report (imbalance, fill, striping, I/O sizes) of a "
        "file of InfluxDB line protocol.",
    )
    parser.add_argument("file", metavar="FILE", help="line protocol, or - for standard input")
    parser.add_argument(
        "--margin",
        type=_fraction,
        default=maths.DEFAULT_OVERLOAD_MARGIN,
        help="an OSS is overloaded when its share exceeds the mean by this much (default 0.25)",
    )
    parser.add_argument(
        "--small-io",
        type=_bytes,
        default=maths.DEFAULT_SMALL_IO_BYTES,
        help="I/Os below this size are small (bytes, or 64K; default 64K)",
    )
    parser.add_argument("--fs", help="only this filesystem's points")
    args = parser.parse_args(argv)
    try:
        if args.file == "-":
            points = read_points(sys.stdin, args.fs)
        else:
            with open(args.file, encoding="utf-8") as handle:
                points = read_points(handle, args.fs)
    except OSError as error:
        print(f"report: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"report: {args.file} is not UTF-8 text", file=sys.stderr)
        return 2
    except ReportInputError as error:
        print(f"report: {args.file}: {error}", file=sys.stderr)
        return 2
    report = build_report(
        points,
        margin=args.margin,
        small_io=args.small_io,
        min_step=maths.sampling_step(points),
    )
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
