"""The maths of operations analytics (DESIGN.md §9), on plain series of points.

No Django, no Celery, no InfluxDB client: the pages, the API, the command line and offline files
all hand in the same ``Point`` lists. Counters are cumulative as the kernel reports them, so a
series' contribution to a window is its last value minus its first; a value that went down
means the counter restarted (a remount, a server reboot), and counting resumes from zero.
A series is one measurement with one full tag set: a target that failed over starts a new
series on the partner, and its bytes count for the server that moved them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from metrics import quantities
from portal.web.numbers import format_bytes
from sensors import schema

# Lustre's allocator leaves round-robin placement past this fill difference (qos_threshold_rr).
QOS_THRESHOLD_RR_POINTS = 17.0
DEFAULT_OVERLOAD_MARGIN = 0.25
DEFAULT_SMALL_IO_BYTES = 64 * 1024
# A job is never flagged for striping below this many bytes in the window, and one stripe is
# warranted per this many bytes it moved: a stripe per few GiB keeps each OST's share of a large
# file's I/O at a size where it streams.
STRIPING_MIN_BYTES = 8 * 2**30
STRIPING_BYTES_PER_STRIPE = 4 * 2**30
PAGE_BYTES = 4096
SECONDS_PER_DAY = 86400


@dataclass(frozen=True)
class Point:
    measurement: str
    tags: tuple[tuple[str, str], ...]  # sorted (key, value) pairs: the series' identity
    fields: dict
    time: float  # epoch seconds

    def tag(self, name: str) -> str:
        return dict(self.tags).get(name, "")


def make_point(measurement: str, tags: dict, fields: dict, time: float) -> Point:
    return Point(measurement, tuple(sorted(tags.items())), fields, time)


class Points(list):
    """A window's points that keep their grouping by series once made: a report groups the same
    points a score of times (a rack's day is 100,000 of them). Read only once made."""

    def __init__(self, points: Iterable[Point] = ()):
        super().__init__(points)
        self.grouped: dict[str, dict[tuple, list[Point]]] = {}
        # Each OST series' bytes/s per heat map column, by (since, until, step, point_step).
        self.spread: dict[tuple, list[tuple[dict, list[float]]]] = {}


def by_series(points: Iterable[Point], measurement: str) -> dict[tuple, list[Point]]:
    """Each series' points of the measurement in time order (shared: not to be changed)."""
    if isinstance(points, Points):
        if measurement not in points.grouped:
            points.grouped[measurement] = _by_series(points, measurement)
        return points.grouped[measurement]
    return _by_series(points, measurement)


def _by_series(points: Iterable[Point], measurement: str) -> dict[tuple, list[Point]]:
    series: dict[tuple, list[Point]] = defaultdict(list)
    for point in points:
        if point.measurement == measurement:
            series[point.tags].append(point)
    for members in series.values():
        members.sort(key=lambda p: p.time)
    return dict(series)


def sampling_step(points: Iterable[Point], measurement: str = "ost") -> float:
    """The usual time between two points of a series (the median gap): a sensor's round."""
    gaps = sorted(
        b.time - a.time
        for members in by_series(points, measurement).values()
        for a, b in zip(members, members[1:], strict=False)
        if b.time > a.time
    )
    return gaps[len(gaps) // 2] if gaps else 1.0


def counter_delta(values: list[float]) -> float:
    """What a cumulative counter counted over its values, in time order; a drop is a restart."""
    total = 0.0
    for previous, current in zip(values, values[1:], strict=False):
        total += current - previous if current >= previous else current
    return total


def field_delta(points: list[Point], name: str) -> float:
    return counter_delta(
        [p.fields[name] for p in points if isinstance(p.fields.get(name), (int, float))]
    )


# One label rule for sensors, health, charts and analytics.
target_label = schema.target_label


# --- OSS load imbalance -----------------------------------------------------------------------


@dataclass(frozen=True)
class Share:
    server: str
    bytes: float
    share: float


@dataclass(frozen=True)
class Imbalance:
    shares: list[Share]
    max_over_mean: float | None
    cov: float | None
    overloaded: list[str]


def server_bytes(points: Iterable[Point]) -> dict[str, float]:
    """Bytes read and written through each server's OSTs over the window."""
    totals: dict[str, float] = defaultdict(float)
    for tags, members in by_series(points, "ost").items():
        server = dict(tags).get("server", "")
        totals[server] += field_delta(members, "read_bytes") + field_delta(members, "write_bytes")
    return dict(totals)


def target_bytes(points: Iterable[Point], server: str | None = None) -> dict[str, float]:
    """Bytes read and written through each OST (by label) over the window, on one server or
    everywhere."""
    totals: dict[str, float] = defaultdict(float)
    for tags, members in by_series(points, "ost").items():
        tag = dict(tags)
        if server is None or tag.get("server") == server:
            label = target_label(tag.get("fs", ""), tag.get("target", ""))
            totals[label] += field_delta(members, "read_bytes") + field_delta(
                members, "write_bytes"
            )
    return dict(totals)


def imbalance(totals: dict[str, float], margin: float = DEFAULT_OVERLOAD_MARGIN) -> Imbalance:
    """Shares of the total, max/mean, the coefficient of variation (population standard
    deviation / mean), and the servers whose share exceeds the mean share by ``margin``."""
    servers = sorted(totals)
    total = sum(totals.values())
    if not servers or total <= 0:
        return Imbalance([Share(s, totals[s], 0.0) for s in servers], None, None, [])
    mean = total / len(servers)
    shares = [Share(s, totals[s], totals[s] / total) for s in servers]
    variance = sum((totals[s] - mean) ** 2 for s in servers) / len(servers)
    limit = (1 + margin) / len(servers)
    overloaded = [share.server for share in shares if share.share > limit]
    return Imbalance(shares, max(totals.values()) / mean, math.sqrt(variance) / mean, overloaded)


def group_shares(totals: dict[str, float], group_of: dict[str, str]) -> dict[str, float | None]:
    """Each server's share of its group's bytes (its SSU: the pair that shares its arrays)."""
    groups: dict[str, float] = defaultdict(float)
    for server, moved in totals.items():
        groups[group_of.get(server, server)] += moved
    return {
        server: (moved / groups[group_of.get(server, server)])
        if groups[group_of.get(server, server)] > 0
        else None
        for server, moved in totals.items()
    }


# --- over time: per-step increments, heat maps, since when ------------------------------------


def increments(points: list[Point], names: tuple[str, ...]) -> list[tuple[float, float]]:
    """(time, amount) of a counter series: what ``names`` together counted between each point
    and the one before (a drop is a restart, counted from zero)."""
    steps = []
    for previous, current in zip(points, points[1:], strict=False):
        amount = 0.0
        for name in names:
            before, after = previous.fields.get(name), current.fields.get(name)
            if isinstance(before, (int, float)) and isinstance(after, (int, float)):
                amount += after - before if after >= before else after
        steps.append((current.time, amount))
    return steps


BYTES = ("read_bytes", "write_bytes")
# How many of a series' rounds one increment may be spread over in a heat map.
SPREAD_ROUNDS = 3


def _row_key(tag: dict, by: str) -> str:
    if by == "server":
        return tag.get("server", "")
    return target_label(tag.get("fs", ""), tag.get("target", ""))


def _spread(
    row: list[float], amount: float, start: float, end: float, since: float, step: float
) -> None:
    """Add ``amount`` moved over (start, end] to the columns of ``row`` (bytes/s), each its
    share of the time: a sensor round missed under load, or points whose steps do not line up
    with the columns, leave no column empty while bytes moved."""
    columns = len(row)
    start = min(max(start, since), end)
    if end - start <= 1e-9:
        row[min(columns - 1, max(0, int((end - since - 1e-9) // step)))] += amount / step
        return
    first = min(columns - 1, max(0, int((start - since) // step)))
    last = min(columns - 1, max(0, int((end - since - 1e-9) // step)))
    for column in range(first, last + 1):
        left = since + column * step if column > first else start
        right = since + (column + 1) * step if column < last else end
        row[column] += amount * max(0.0, right - left) / (end - start) / step


def heatmap(
    points: Iterable[Point],
    by: str,
    since: float,
    until: float,
    step: float,
    point_step: float | None = None,
) -> dict:
    """Bytes/s per ``by`` (``server`` or ``target``) and time step over [since, until]: rows
    sorted by their total, hottest first; ``times`` are the steps' starts. Each increment is
    spread over the time since the point before; the first increment of a series, whose point
    before may be the window's first value placed at ``since``, over at most one round of the
    series (its usual gap, and no less than ``point_step``, the points' step as read)."""
    columns = max(1, math.ceil((until - since) / step))
    rows: dict[str, list[float]] = {}
    for tag, spread in _series_spread(points, since, until, step, point_step):
        row = rows.setdefault(_row_key(tag, by), [0.0] * columns)
        for column, value in enumerate(spread):
            row[column] += value
    ranked = sorted(rows.items(), key=lambda item: (-sum(item[1]), item[0]))
    return {
        "by": by,
        "step": step,
        "times": [since + i * step for i in range(columns)],
        "rows": [{"name": name, "values": values} for name, values in ranked],
        "max": max((max(values) for values in rows.values()), default=0.0),
    }


def _series_spread(
    points: Iterable[Point], since: float, until: float, step: float, point_step: float | None
) -> list[tuple[dict, list[float]]]:
    """Each OST series' tags and bytes/s per column (see ``heatmap``): made once for a
    report's heat maps by server and by target and its since-when."""
    key = (since, until, step, point_step)
    if isinstance(points, Points) and key in points.spread:
        return points.spread[key]
    columns = max(1, math.ceil((until - since) / step))
    spread = []
    for tags, members in by_series(points, "ost").items():
        row = [0.0] * columns
        # The series' own round, from its gaps after the first (the first may be the window's
        # first value, placed at its start however late the series began).
        later = sorted(b.time - a.time for a, b in zip(members[1:], members[2:], strict=False))
        first_span = max(point_step or 0.0, later[len(later) // 2] if later else 0.0) or step
        before = members[0].time if members else since
        for number, (t, amount) in enumerate(increments(members, BYTES)):
            # A round or two missed: spread over the gap; a server that was down: its bytes
            # since it came back belong to its last few rounds, not to the outage.
            reach = first_span if number == 0 else SPREAD_ROUNDS * first_span
            _spread(row, amount, max(before, t - reach), t, since, step)
            before = t
        spread.append((dict(tags), row))
    if isinstance(points, Points):
        points.spread[key] = spread
    return spread


def cell_jobs(
    points: Iterable[Point], by: str, name: str, start: float, end: float, limit: int = 10
) -> list[dict]:
    """The jobs that moved bytes through one heat-map cell: a server or a target, from ``start``
    (excluded) to ``end`` (included)."""
    jobs: dict[str, float] = defaultdict(float)
    for tags, members in by_series(points, "ost_job").items():
        tag = dict(tags)
        key = _row_key(tag, by)
        if key != name:
            continue
        for t, amount in increments(members, BYTES):
            if start < t <= end:
                jobs[tag.get("jobid", "")] += amount
    ranked = sorted(((j, b) for j, b in jobs.items() if b > 0), key=lambda i: (-i[1], i[0]))
    return [{"jobid": job, "bytes": moved} for job, moved in ranked[:limit]]


def overloaded_since(
    points: Iterable[Point],
    servers: list[str],
    since: float,
    until: float,
    step: float,
    margin: float = DEFAULT_OVERLOAD_MARGIN,
    point_step: float | None = None,
) -> dict[str, float | None]:
    """For each of ``servers``: the start of the last unbroken run of steps, up to the end of
    the window, in which its share was above the mean by ``margin`` (None: not over at the end
    of the window)."""
    grid = heatmap(points, "server", since, until, step, point_step)
    values = {row["name"]: row["values"] for row in grid["rows"]}
    everyone = list(values)
    answer: dict[str, float | None] = {}
    for server in servers:
        start = None
        for column in range(len(grid["times"]) - 1, -1, -1):
            total = sum(values[s][column] for s in everyone)
            if total <= 0:
                if start is None:
                    continue  # nothing moved at the end of the window: look further back
                break
            if values.get(server, [0.0] * (column + 1))[column] / total <= (1 + margin) / len(
                everyone
            ):
                break
            start = grid["times"][column]
        answer[server] = start
    return answer


def top_jobs(
    points: Iterable[Point],
    server: str | None = None,
    limit: int = 10,
    target: str | None = None,
    by: str = "bytes",
) -> list[dict]:
    """Jobs by bytes (or by operations: ``by="ops"``) over the window: on one server, one
    target (its label), or everywhere."""
    return _top(points, "ost_job", "jobid", server, limit, target, by)


def top_clients(
    points: Iterable[Point],
    server: str | None = None,
    limit: int = 10,
    target: str | None = None,
    by: str = "bytes",
) -> list[dict]:
    """Clients (their NIDs, from the OSTs' per-export stats) by bytes or operations over the
    window, as ``top_jobs``: the same question asked of the clients, whether or not their
    jobs are tagged."""
    return _top(points, "ost_client", "client", server, limit, target, by)


def _top(
    points: Iterable[Point],
    measurement: str,
    key: str,
    server: str | None,
    limit: int,
    target: str | None,
    by: str,
) -> list[dict]:
    found: dict[str, dict[str, float]] = defaultdict(lambda: {"bytes": 0.0, "ops": 0.0})
    for tags, members in by_series(points, measurement).items():
        tag = dict(tags)
        if server is not None and tag.get("server") != server:
            continue
        if target is not None and target_label(tag.get("fs", ""), tag.get("target", "")) != target:
            continue
        entry = found[tag.get(key, "")]
        entry["bytes"] += field_delta(members, "read_bytes") + field_delta(members, "write_bytes")
        entry["ops"] += field_delta(members, "read_calls") + field_delta(members, "write_calls")
    ranked = sorted(found.items(), key=lambda item: (-item[1][by], item[0]))
    return [{key: name, **figures} for name, figures in ranked[:limit] if figures[by] > 0]


# --- OST fill ---------------------------------------------------------------------------------


def ost_fill(points: Iterable[Point], threshold: float = QOS_THRESHOLD_RR_POINTS) -> dict:
    """Each OST's newest fill, the spread in points, and the OSTs furthest from the mean."""
    newest: dict[str, Point] = {}
    for tags, members in by_series(points, "ost").items():
        tag = dict(tags)
        label = target_label(tag.get("fs", ""), tag.get("target", ""))
        for point in reversed(members):
            if quantities.fields_fill_percent(point.fields) is not None:
                if label not in newest or newest[label].time < point.time:
                    newest[label] = point
                break
    fills = {label: quantities.fields_fill_percent(point.fields) for label, point in newest.items()}
    if not fills:
        return {"spread_points": None, "flagged": False, "osts": [], "furthest": []}
    mean = sum(fills.values()) / len(fills)
    spread = max(fills.values()) - min(fills.values())
    rows = [
        {"target": label, "fill_percent": round(fill, 2), "from_mean_points": round(fill - mean, 2)}
        for label, fill in sorted(fills.items())
    ]
    furthest = sorted(rows, key=lambda row: -abs(row["from_mean_points"]))[:5]
    return {
        "spread_points": round(spread, 2),
        "flagged": spread > threshold,
        "threshold_points": threshold,
        "mean_percent": round(mean, 2),
        "osts": rows,
        "furthest": furthest if spread > threshold else [],
    }


# --- striping ---------------------------------------------------------------------------------


def striping(
    points: Iterable[Point],
    filesystem_osts: int,
    min_bytes: float = STRIPING_MIN_BYTES,
    bytes_per_stripe: float = STRIPING_BYTES_PER_STRIPE,
) -> list[dict]:
    """Jobs whose bytes land on fewer OSTs than their volume warrants, with the stripe count
    to use (bounded by the filesystem's OSTs) and a sentence a user can forward."""
    per_job: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for tags, members in by_series(points, "ost_job").items():
        tag = dict(tags)
        moved = field_delta(members, "read_bytes") + field_delta(members, "write_bytes")
        if moved > 0:
            per_job[tag.get("jobid", "")][
                target_label(tag.get("fs", ""), tag.get("target", ""))
            ] += moved
    flagged = []
    for job, by_ost in sorted(per_job.items()):
        moved = sum(by_ost.values())
        osts = len(by_ost)
        if moved < min_bytes or filesystem_osts <= 0:
            continue
        warranted = min(filesystem_osts, max(1, math.ceil(moved / bytes_per_stripe)))
        if osts >= warranted:
            continue
        flagged.append(
            {
                "jobid": job,
                "osts": osts,
                "bytes": moved,
                "stripe_count": warranted,
                "advice": (
                    f"Job {job} moved {format_bytes(moved)} through {osts} "
                    f"OST{'s' if osts != 1 else ''} of {filesystem_osts}; stripe its output "
                    f"directory over {warranted} "
                    f"(lfs setstripe -c {warranted} <dir>) so that its I/O spreads over more "
                    "servers and disks instead of queueing on "
                    f"{'one' if osts == 1 else 'a few'}."
                ),
            }
        )
    flagged.sort(key=lambda row: -row["bytes"])
    return flagged


# --- client access patterns -------------------------------------------------------------------


def bucket_bytes(section: str, bucket: str) -> float | None:
    """The I/O size of a brw_stats bucket: `4K`, `1M` in disk_io_size; pages in
    pages_per_bulk_rw."""
    text = bucket.strip()
    scale = {"K": 1024, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
    number = text[:-1] if scale != 1 else text
    if not number.isdigit():
        return None
    value = int(number) * scale
    return value * PAGE_BYTES if section == "pages_per_bulk_rw" else float(value)


def _histograms(points: Iterable[Point], key) -> dict[str, dict[str, dict[float, list[float]]]]:
    """brw I/O counts over the window: name (``key(tags)``) -> section -> size -> [read, write]."""
    grouped: dict[str, dict[str, dict[float, list[float]]]] = {}
    for tags, members in by_series(points, "brw").items():
        tag = dict(tags)
        section = tag.get("section", "")
        if section not in ("disk_io_size", "pages_per_bulk_rw"):
            continue
        size = bucket_bytes(section, tag.get("bucket", ""))
        if size is None:
            continue
        histograms = grouped.setdefault(key(tag), {})
        counts = histograms.setdefault(section, {}).setdefault(size, [0.0, 0.0])
        counts[0] += field_delta(members, "read_ios")
        counts[1] += field_delta(members, "write_ios")
    return grouped


def _sized(histograms: dict[str, dict[float, list[float]]], small_io: float) -> dict:
    """One histogram (disk_io_size, else pages_per_bulk_rw) and its share of small I/Os."""
    section = "disk_io_size" if histograms.get("disk_io_size") else "pages_per_bulk_rw"
    histogram = histograms.get(section, {})
    total = sum(r + w for r, w in histogram.values())
    small = sum(r + w for size, (r, w) in histogram.items() if size < small_io)
    return {
        "section": section if histogram else None,
        "histogram": [
            {"bytes": int(size), "read_ios": r, "write_ios": w}
            for size, (r, w) in sorted(histogram.items())
        ],
        "ios": total,
        "small_share": small / total if total else None,
    }


def io_sizes(
    points: Iterable[Point],
    small_io: float = DEFAULT_SMALL_IO_BYTES,
    group_of: dict[str, str] | None = None,
) -> dict:
    """I/O size histogram over the window (disk_io_size, else pages_per_bulk_rw), the share of
    I/Os below ``small_io``, and the read/write mix by bytes; the same per OST and, with
    ``group_of`` (server -> SSU), per SSU."""
    points = list(points)
    whole = _histograms(points, lambda tag: "").get("", {})
    read = write = 0.0
    for members in by_series(points, "ost").values():
        read += field_delta(members, "read_bytes")
        write += field_delta(members, "write_bytes")
    per_ost = _histograms(
        points, lambda tag: target_label(tag.get("fs", ""), tag.get("target", ""))
    )
    result = {
        **_sized(whole, small_io),
        "small_io_bytes": small_io,
        "read_share": read / (read + write) if read + write else None,
        "per_ost": {name: _sized(h, small_io) for name, h in sorted(per_ost.items())},
    }
    if group_of:
        per_ssu = _histograms(
            points, lambda tag: group_of.get(tag.get("server", ""), tag.get("server", ""))
        )
        result["per_ssu"] = {name: _sized(h, small_io) for name, h in sorted(per_ssu.items())}
    return result
