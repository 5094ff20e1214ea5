"""The analytics report of a window, read from InfluxDB: the pages and the API call
``report``. The maths is ``portal.analytics.maths`` and ``report.build_report``, the same that
``python -m portal.analytics.report`` runs on a file.

The points read are what the maths needs and no more: for each OST and each job on it, the
first value of the window and the last of each step (counters telescope, so the window's bytes
are exact and each step's increment is there for the heat maps); for the brw histograms, the
first and the last value of the window. The step cuts the window in about
``choices.HEATMAP_COLUMNS``; windows of hours read the 1-minute means.

A window of half a day or more reads the hour means for every hour the continuous query has
written, and the minute means only at its two edges (the first value of its first hour, the
last after its last written hour): a day at 100 SSUs is then 24 rows per series, not 1,440,
with the same bytes (the counters still telescope from edge to edge); its heat maps have a
column per hour or more.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from metrics.influxql import analytics as queries
from metrics.influxql.common import (
    HOUR_POLICY,
    MINUTE_POLICY,
    POLICY_STEPS,
    RAW_POLICY,
    Source,
    filesystem_condition,
)
from portal import influxdb as influx
from portal.analytics import choices, maths
from portal.analytics.models import AnalyticsSettings
from portal.analytics.report import build_report
from portal.health.models import HealthSettings
from portal.health.rules import slowness
from portal.health.services.charts import available_policies, sources_for
from portal.health.services.slowness import diagnose_targets
from portal.inventory.choices import TargetKind
from portal.inventory.models import Filesystem, Server, Target
from portal.web.query_numbers import BadParameter, time_in_range
from sensors import schema

MAX_WINDOW_SECONDS = 366 * 86400
# Windows at least this long read the hour means (see above).
HOURS_FROM_SECONDS = 12 * 3600
# The hour's continuous query writes its means this long after the hour ends, at most.
HOUR_WRITTEN_SECONDS = 120


class WindowError(BadParameter):
    """A window that cannot be read; ``field`` names the parameter at fault."""


@dataclass(frozen=True)
class Window:
    since: float
    until: float
    label: str  # "1h", "24h", "7d", or "" for a range given as since/until

    @property
    def seconds(self) -> float:
        return self.until - self.since

    def query(self) -> dict[str, str]:
        """The URL parameters that give this window again (kept in links, so a view is shared
        as it is)."""
        if self.label:
            return {"window": self.label}
        return {"since": _iso(self.since), "until": _iso(self.until)}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(field: str, text: str) -> float:
    """Epoch seconds or an ISO 8601 time (UTC when it names no zone), from 1970 to 2200."""
    text = text.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            seconds = float(text)
        except ValueError:
            raise WindowError(
                field, f"{text!r} is not a time (2026-11-23T08:00:00Z or epoch seconds)"
            ) from None
        return time_in_range(field, seconds, text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return time_in_range(field, moment.timestamp(), text)


def parse_window(params, now: float | None = None) -> Window:
    """``window=1h|24h|7d``, or ``since`` (and ``until``, default now) as a range."""
    now = time.time() if now is None else now
    since_text, until_text = params.get("since", ""), params.get("until", "")
    if since_text or until_text:
        if not since_text:
            raise WindowError("since", "give the start of the range as well as its end")
        since = parse_time("since", since_text)
        until = parse_time("until", until_text) if until_text else now
        if until <= since:
            raise WindowError("until", "the end of the range must be after its start")
        if until - since > MAX_WINDOW_SECONDS:
            raise WindowError("since", "a range of at most a year can be analysed")
        return Window(since, min(until, now), "")
    label = params.get("window") or choices.DEFAULT_WINDOW
    if label not in choices.WINDOWS:
        raise WindowError("window", f"{label!r} is not one of {', '.join(choices.WINDOWS)}")
    return Window(now - choices.WINDOWS[label], now, label)


def filesystem_of(params) -> Filesystem | None:
    """The filesystem asked for (``fs``), else the only or the first one."""
    name = params.get("fs", "")
    if name:
        found = Filesystem.objects.filter(name=name).first()
        if found is None:
            raise WindowError("fs", f"there is no filesystem {name!r}")
        return found
    return Filesystem.objects.order_by("name").first()


# --- reading the points -----------------------------------------------------------------------


def read_points(window: Window, fs: str | None) -> tuple[list[maths.Point], Source | None]:
    """The window's points of ``fs`` (all filesystems: None), from the first source that holds
    any, with the step that cuts the data's real span in about HEATMAP_COLUMNS."""
    where = filesystem_condition(fs) if fs else ""
    if window.seconds >= HOURS_FROM_SECONDS and HOUR_POLICY in available_policies():
        points, source = _read_hours(window, where)
        if points:
            return points, source
    for source in sources_for(int(window.seconds)):
        first = _oldest(source, window)
        if first is None:
            continue
        since = max(window.since, first)
        step = max(source.step, int((window.until - since) / choices.HEATMAP_COLUMNS) or 1)
        fitted = Source(source.policy, -(-step // source.step) * source.step)
        statements = queries.analytics_statements(fitted, where, window.since, window.until)
        # First of the window, last of each step, for ost and ost_job; first and last of the
        # window for brw.
        points = _points(statements, _READ_AS, window.since, window.until, fitted.step)
        if points:
            return points, fitted
    return [], None


def _read_hours(window: Window, where: str) -> tuple[list[maths.Point], Source | None]:
    """The window's points from the hour means between its minute-mean edges; none when the
    hour policy holds fewer than two of the window's hours (a young rack): the minute read."""
    hour, minute = POLICY_STEPS[HOUR_POLICY], Source(MINUTE_POLICY, POLICY_STEPS[MINUTE_POLICY])
    first = _oldest(Source(HOUR_POLICY, hour), window)
    edge = (int(window.until) - HOUR_WRITTEN_SECONDS) // hour * hour
    if first is None or edge - first < 2 * hour:
        return [], None
    # The first value is the minute means' (the hour means' first is up to an hour late).
    since = max(window.since, _oldest(minute, window) or first)
    step = max(hour, -(-int((window.until - since) / choices.HEATMAP_COLUMNS) // hour) * hour)
    source = Source(HOUR_POLICY, step)
    statements = queries.analytics_hour_statements(minute, source, where, since, edge, window.until)
    points = _points(statements, _READ_BY_HOURS_AS, window.since, window.until, step, edge)
    return points, source


def _points(
    statements: list[str],
    read_as: tuple[tuple[schema.Measurement, str], ...],
    since: float,
    until: float,
    step: int,
    steps_end: float | None = None,
) -> list[maths.Point]:
    """The statements' rows as points, each statement's (measurement, where its points' time
    is): ``since`` or ``until`` of the window, or the end of its ``step`` (at most
    ``steps_end``). Several selectors in one statement come back with the time of the range or
    of the step's start, not of the values."""
    points = []
    series: dict[tuple, tuple] = {}  # each series' tags, made once for all its points
    for (measurement, at), rows in zip(read_as, _side_by_side(statements), strict=True):
        fields = queries.ANALYTICS_FIELDS[measurement.name]
        for row in rows:
            if at == "step":
                moment = min(row["time"] + step, until if steps_end is None else steps_end)
            else:
                moment = since if at == "since" else until
            values = {f: row[f] for f in fields if row.get(f) is not None}
            if not values:
                continue
            identity = (measurement.name, *(row.get(tag) or "" for tag in measurement.tags))
            tags = series.get(identity)
            if tags is None:
                named = zip(measurement.tags, identity[1:], strict=True)
                tags = series[identity] = tuple(sorted(named))
            point = maths.Point(measurement.name, tags, values, moment)
            last = points[-1] if points else None
            if at == "step" and last is not None and last.tags is tags and last.time == moment:
                # Two stored series of one (a sensor's static tags changed within the hour:
                # the continuous query keeps them apart) read raw: one point, as last() gives.
                points[-1] = point
            else:
                points.append(point)
    return points


_READ_BY_HOURS_AS = tuple(
    (measurement, at)
    for measurement in (schema.OST, schema.OST_JOB, schema.OST_CLIENT, schema.BRW)
    for at in (("since", "until") if measurement is schema.BRW else ("since", "step", "until"))
)


_READ_AS = (
    (schema.OST, "since"),
    (schema.OST, "step"),
    (schema.OST_JOB, "since"),
    (schema.OST_JOB, "step"),
    (schema.OST_CLIENT, "since"),
    (schema.OST_CLIENT, "step"),
    (schema.BRW, "since"),
    (schema.BRW, "until"),
)


def _side_by_side(statements: list[str]) -> list[list[dict]]:
    """Each statement's rows, the statements sent as requests side by side: InfluxDB answers
    one request's statements one after the other, on one core."""
    return [rows for (rows,) in influx.query_tagged_at_once([[s] for s in statements], epoch="s")]


def _oldest(source: Source, window: Window) -> float | None:
    """When the window's OST statistics start in this source (None: it holds none)."""
    (rows,) = influx.query_tagged(
        [queries.analytics_oldest_statement(source, window.since, window.until)], epoch="s"
    )
    return rows[0]["time"] if rows else None


# --- the report -----------------------------------------------------------------------------


def report(window: Window, filesystem: Filesystem | None) -> dict:
    """The whole analytics report of the window, as the API returns it."""
    limits = AnalyticsSettings.load()
    health = HealthSettings.load()
    fs = filesystem.name if filesystem else None
    started = time.perf_counter()
    points, source = read_points(window, fs)
    read_seconds = time.perf_counter() - started
    osts = Target.objects.filter(kind=TargetKind.OST)
    if filesystem:
        osts = osts.filter(filesystem=filesystem)
    body = build_report(
        points,
        margin=limits.margin,
        small_io=limits.small_io_bytes,
        capacity_warning=health.capacity_warning_percent,
        capacity_critical=health.capacity_critical_percent,
        filesystem_osts=osts.count() or None,
        fill_threshold=limits.fill_spread_points,
        striping_min_bytes=limits.striping_min_gib * 2**30,
        bytes_per_stripe=limits.striping_gib_per_stripe * 2**30,
        group_of=ssu_of_servers(),
        columns=choices.HEATMAP_COLUMNS,
        heatmap_ost_rows=choices.HEATMAP_OST_ROWS,
        min_step=source.step if source else 1.0,
    )
    body["slow_at_array"] = slow_at_array(window, source, osts)
    body["request"] = {
        "since": window.since,
        "until": window.until,
        "window": window.label or None,
        "fs": fs,
        "policy": (source.policy or RAW_POLICY) if source else None,
        "step": source.step if source else None,
        "points": len(points),
        "read_seconds": round(read_seconds, 3),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return body


def slow_at_array(window: Window, source: Source | None, osts) -> list[dict]:
    """The OSTs slow at the array in the window (their volume answers slowly at the array,
    their OSS is not the cause), slowest first: what the load page names instead of an
    overloaded OSS."""
    if source is None:
        return []
    found = diagnose_targets(
        list(osts.select_related("volume_group__array", "primary_server", "failover_server")),
        window.since,
        window.until,
        Source(source.policy, source.step),
    )
    slow = [d.as_dict() for d in found.values() if d.verdict == slowness.SLOW_AT_ARRAY]
    return sorted(slow, key=lambda d: -(d["array_ms"] or 0))


def ssu_of_servers() -> dict[str, str]:
    """Each OSS's SSU: the unit whose arrays its pair serves."""
    return {
        hostname: ssu
        for hostname, ssu in Server.objects.filter(pair__ssu__isnull=False).values_list(
            "hostname", "pair__ssu__name"
        )
    }


def cell_jobs(
    filesystem: Filesystem | None, by: str, name: str, start: float, end: float
) -> tuple[float, list[dict]]:
    """The jobs that moved bytes through a server or an OST around one cell of a heat map,
    and where that reading starts: the cell and the step before it, because a cell can hold
    a single sample of a series and an increment needs the one before."""
    since = start - (end - start)
    points, _ = read_points(Window(since, end, ""), filesystem.name if filesystem else None)
    return since, maths.cell_jobs(points, by, name, since - 1, end)
