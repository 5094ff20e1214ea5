"""The numbers behind the dashboard's charts, read from InfluxDB (DESIGN.md §6).

Counters are cumulative, so rates are ``non_negative_derivative`` per series (one target on one
server) summed afterwards: a target that fails over starts a new series and is not counted as a
jump. A range picks its retention policy: raw points up to 6 hours, the 1-minute means up to 30
days, the 1-hour means beyond (the policies and continuous queries ``influxdb_setup`` creates);
in the downsampled policies a field ``x`` is ``mean_x`` (the continuous queries keep the mean
of every field). The InfluxQL texts are in ``metrics.influxql``.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from django.conf import settings

from metrics import chart_rows, quantities
from metrics.influxql import charts as queries
from metrics.influxql.common import (
    HOUR_POLICY,
    MINUTE_POLICY,
    PER_SERVER,
    PER_TARGET,
    POLICY_STEPS,
    Source,
    filesystem_condition,
    servers_condition,
    target_condition,
)
from portal import influxdb as influx
from portal.health.choices import CHART_RANGES
from sensors import schema

RAW_UP_TO_SECONDS = 6 * 3600
MINUTE_UP_TO_SECONDS = 30 * 86400
POINTS_PER_CHART = 240
# A downsampled policy is read once it holds this many of its steps (see _first_with_points).
MIN_STEPS_OF_DATA = 4
# Capacity and other "latest" values are searched this far back.
LATEST_WINDOW_SECONDS = 600
# Throughput in binary units, like every size the portal prints (portal/web/numbers.py).
MIB = 2**20

# Per database: when its policies were asked, and their names.
_policies: dict[str, tuple[float, set[str]]] = {}


def available_policies() -> set[str]:
    """Retention policies of the database, asked at most once a minute."""
    database = settings.INFLUXDB_DATABASE
    checked, names = _policies.get(database, (-math.inf, set()))
    if time.monotonic() - checked > 60:
        try:
            names = set(influx.retention_policies())
        except influx.InfluxError:
            names = set()
        _policies[database] = (time.monotonic(), names)
    return names


def source_for(range_seconds: int, policies: set[str] | None = None) -> Source:
    return sources_for(range_seconds, policies)[0]


def sources_for(range_seconds: int, policies: set[str] | None = None) -> list[Source]:
    """Where a range's points are looked for, best first: the policy that fits the range,
    then the finer ones. Young data is only in the finer policies (a continuous query fills
    the hour's means at the end of each hour), so a chart falls back to them rather than show
    nothing while the data exists."""
    policies = available_policies() if policies is None else policies
    if range_seconds <= RAW_UP_TO_SECONDS:
        wanted = [None]
    elif range_seconds <= MINUTE_UP_TO_SECONDS:
        wanted = [MINUTE_POLICY, None]
    else:
        wanted = [HOUR_POLICY, MINUTE_POLICY, None]
    # A policy not set up (yet) is skipped: the raw points, thinned by a wider step.
    usable = [policy for policy in wanted if policy is None or policy in policies]
    return [_source(policy, range_seconds) for policy in usable]


def _source(policy: str | None, seconds: float) -> Source:
    """The policy's points in the step that draws ``seconds`` in about POINTS_PER_CHART."""
    base = POLICY_STEPS[policy]
    wanted = max(base, int(seconds) // POINTS_PER_CHART)
    return Source(policy, -(-wanted // base) * base)


def _first_with_points(
    range_seconds: int, statement, probe: tuple[str, str]
) -> tuple[list[dict], Source]:
    """Run ``statement(source)`` on the range's sources in turn until one has points.

    A downsampled policy is read only once it holds a few of its steps of data: young data is
    in the finer policies in more detail (the 1-minute means of a rack one minute old are one
    point, its raw points six). Data younger than the range is drawn with a step that fits its
    age: a rate needs two buckets, and a 90-day chart's 9-hour buckets hold an hour-old rack in
    one. ``probe`` is a (measurement, field) whose oldest point in the range tells that age.
    """
    sources = sources_for(range_seconds)
    for source in sources:
        if source is sources[0] and source.policy is None:
            # The range's own policy is the raw one: read it as it is, no probe needed.
            (points,) = influx.query_tagged([statement(source)], epoch="s")
            if points:
                return points, source
            continue
        age = _age_of_data(source, probe, range_seconds)
        if age is None:
            continue
        if source.policy is not None and age < MIN_STEPS_OF_DATA * POLICY_STEPS[source.policy]:
            continue  # too young for this policy: the finer one shows it
        fitted = _source(source.policy, min(range_seconds, age))
        (points,) = influx.query_tagged([statement(fitted)], epoch="s")
        if points:
            return points, fitted
    return [], source_for(range_seconds)


def _age_of_data(source: Source, probe: tuple[str, str], range_seconds: int) -> float | None:
    """Seconds since the oldest point of the probe within the range, in that source."""
    measurement, field = probe
    statement = queries.oldest_point_statement(source, measurement, field, range_seconds)
    (points,) = influx.query_tagged([statement], epoch="s")
    return time.time() - points[0]["time"] if points else None


def range_seconds(label: str | None) -> int:
    return CHART_RANGES.get(label or "", CHART_RANGES["1h"])


# --- scopes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """Which series a chart sums: the whole filesystem, an SSU's servers, one server, one
    target. ``where`` is an InfluxQL condition on the tags."""

    where: str

    @classmethod
    def filesystem(cls, name: str) -> Scope:
        return cls(filesystem_condition(name))

    @classmethod
    def servers(cls, hostnames: list[str]) -> Scope:
        return cls(servers_condition(hostnames))

    @classmethod
    def target(cls, label: str) -> Scope:
        return cls(target_condition(label))


# --- charts -----------------------------------------------------------------------------------


def _rates(
    measurement: str,
    fields: dict[str, str],
    scope: Scope,
    seconds: int,
    per_series: tuple[str, ...] = PER_TARGET,
    scale: float = 1.0,
) -> dict:
    """Per-second rates of counters, summed over the scope's series, in time buckets.

    ``fields`` maps a chart series name to a counter field.
    """

    def statement(source: Source) -> str:
        return queries.chart_rate_statement(
            measurement, fields, scope.where, source, seconds, per_series
        )

    points, source = _first_with_points(
        seconds, statement, (measurement, next(iter(fields.values())))
    )
    return _columns(points, list(fields), scale, source)


def _columns(points: list[dict], names: list[str], scale: float, source: Source) -> dict:
    points = sorted(points, key=lambda p: p["time"])
    return {
        "time": [p["time"] for p in points],
        "series": {
            name: [None if p.get(name) is None else round(p[name] / scale, 3) for p in points]
            for name in names
        },
        "policy": source.policy or "raw",
        "step": source.step,
    }


def throughput(scope: Scope, seconds: int) -> dict:
    """Read and write MiB/s."""
    chart = _rates(
        schema.OST.name, {"read": "read_bytes", "write": "write_bytes"}, scope, seconds, scale=MIB
    )
    chart["unit"] = "MiB/s"
    return chart


def iops(scope: Scope, seconds: int) -> dict:
    chart = _rates(schema.OST.name, {"read": "read_calls", "write": "write_calls"}, scope, seconds)
    chart["unit"] = "IO/s"
    return chart


def lnet(hostname: str, seconds: int) -> dict:
    chart = _rates(
        schema.LNET.name,
        {"send": "send_bytes", "receive": "recv_bytes"},
        Scope.servers([hostname]),
        seconds,
        per_series=PER_SERVER,
        scale=MIB,
    )
    chart["unit"] = "MiB/s"
    return chart


def cpu(hostname: str, seconds: int) -> dict:
    """Busy share of the CPU by kind (user, system, iowait), in percent."""
    kinds = {field.removeprefix("cpu_"): field for field in schema.CPU_FIELDS}
    chart = _rates(
        schema.NODE.name, kinds, Scope.servers([hostname]), seconds, per_series=PER_SERVER
    )
    series = chart["series"]
    shown = {"user": [], "system": [], "iowait": []}
    for index in range(len(chart["time"])):
        total = sum(series[kind][index] or 0 for kind in kinds)
        for kind in shown:
            value = series[kind][index]
            share = None if value is None else quantities.percent(value, total)
            shown[kind].append(None if share is None else round(share, 1))
    chart["series"] = shown
    chart["unit"] = "%"
    return chart


def memory(hostname: str, seconds: int) -> dict:
    points, source = _first_with_points(
        seconds,
        lambda source: queries.memory_statement(source, Scope.servers([hostname]).where, seconds),
        (schema.NODE.name, "mem_total_kb"),
    )
    used = [
        {
            "time": p["time"],
            "used": quantities.used_percent(p.get("total"), p.get("available")),
        }
        for p in points
    ]
    chart = _columns(used, ["used"], 1.0, source)
    chart["unit"] = "%"
    return chart


def temperatures(hostname: str, seconds: int) -> dict:
    """One series per BMC temperature sensor, in °C."""
    points, source = _first_with_points(
        seconds,
        lambda source: queries.temperatures_statement(
            source, Scope.servers([hostname]).where, seconds
        ),
        (schema.BMC.name, "value"),
    )
    times = sorted({p["time"] for p in points})
    index = {t: i for i, t in enumerate(times)}
    series: dict[str, list] = {}
    for point in points:
        values = series.setdefault(point.get("sensor", "?"), [None] * len(times))
        if point.get("value") is not None:
            values[index[point["time"]]] = round(point["value"], 1)
    return {
        "time": times,
        "series": dict(sorted(series.items())),
        "policy": source.policy or "raw",
        "step": source.step,
        "unit": "°C",
    }


def target_fill(label: str, seconds: int) -> dict:
    points, source = _first_with_points(
        seconds,
        lambda source: queries.target_fill_statement(source, Scope.target(label).where, seconds),
        (schema.OST.name, "kbytes_total"),
    )
    rows = [{"time": p["time"], "fill": _fill(p)} for p in points]
    chart = _columns(rows, ["fill"], 1.0, source)
    chart["unit"] = "%"
    return chart


def _fill(point: dict) -> float | None:
    fill = quantities.ost_fill_percent(point.get("total"), point.get("free"), point.get("avail"))
    return None if fill is None else round(fill, 2)


def capacity(scope: Scope) -> dict:
    """Per OST: used and available TB and fill; and the total (the OST balance view). A large
    scope lists its fullest OSTs and the others together (``chart_rows``); the total is all
    of them."""
    statement = queries.capacity_statement(scope.where, LATEST_WINDOW_SECONDS)
    (points,) = influx.query_tagged([statement], epoch="s")
    osts = []
    for point in sorted(points, key=lambda p: (p.get("fs", ""), p.get("target", ""))):
        fill = _fill(point)
        if fill is None:
            continue
        used_kb, avail_kb = quantities.ost_used_and_available(
            point["total"], point["free"], point.get("avail")
        )
        osts.append(
            {
                "label": schema.point_label(point),
                "used_tb": round(used_kb / 1024**3, 3),
                "avail_tb": round(avail_kb / 1024**3, 3),
                "fill_percent": fill,
            }
        )
    shown, rest = chart_rows.top_and_rest(osts, key=lambda ost: ost["fill_percent"])
    fills = [o["fill_percent"] for o in osts]
    spread = chart_rows.spread(fills)
    return {
        "osts": shown,
        "others": {"count": len(rest), **_pooled(rest)} if rest else None,
        "total": {
            **_pooled(osts),
            "spread_percent": round(spread["max"] - spread["min"], 2) if fills else None,
            "count": len(osts),
            **{f"{name}_percent": value for name, value in spread.items()},
        },
    }


def _pooled(osts: list[dict]) -> dict:
    """The OSTs' space together: used and available TB and the fill of the sum."""
    used = sum(o["used_tb"] for o in osts)
    avail = sum(o["avail_tb"] for o in osts)
    fill = quantities.fill_percent(used, avail)
    return {
        "used_tb": round(used, 3),
        "avail_tb": round(avail, 3),
        "fill_percent": None if fill is None else round(fill, 2),
    }


def oss_share(scope: Scope, seconds: int) -> dict:
    """Each OSS's bytes read and written over the range and its share of the total (the OSS
    balance view). Bytes per series are ``spread`` (last - first) of the counter, summed here
    per server (quicker than a subquery on thousands of series). A large scope lists its
    busiest OSSs and the others together (``chart_rows``); total and imbalance are all of them."""
    points, source = _first_with_points(
        seconds,
        lambda source: queries.oss_share_statement(source, scope.where, seconds),
        (schema.OST.name, "read_bytes"),
    )
    moved: dict[str, list[float]] = {}
    for point in points:
        if point.get("server"):
            totals = moved.setdefault(point["server"], [0.0, 0.0])
            totals[0] += point.get("rb") or 0
            totals[1] += point.get("wb") or 0
    servers = [
        {"server": name, "read_gb": round(read / 1e9, 3), "write_gb": round(write / 1e9, 3)}
        for name, (read, write) in sorted(moved.items())
    ]
    total = sum(s["read_gb"] + s["write_gb"] for s in servers)
    for entry in servers:
        share = entry["read_gb"] + entry["write_gb"]
        entry["share_percent"] = round(quantities.percent(share, total) or 0.0, 2)
    mean = 100 / len(servers) if servers else 0
    shown, rest = chart_rows.top_and_rest(
        servers, key=lambda server: server["read_gb"] + server["write_gb"]
    )
    others = None
    if rest:
        read = sum(s["read_gb"] for s in rest)
        write = sum(s["write_gb"] for s in rest)
        together = quantities.percent(read + write, total) or 0.0
        others = {
            "count": len(rest),
            "read_gb": round(read, 3),
            "write_gb": round(write, 3),
            "share_percent": round(together, 2),
            "mean_share_percent": round(together / len(rest), 2),
        }
    return {
        "servers": shown,
        "others": others,
        "count": len(servers),
        "total_gb": round(total, 3),
        "imbalance": round(max(s["share_percent"] for s in servers) / mean, 2)
        if servers and total
        else None,
        "policy": source.policy or "raw",
    }


_SIZE_RE = re.compile(r"^(\d+)([KMG]?)")


def _bucket_bytes(bucket: str) -> int:
    match = _SIZE_RE.match(bucket)
    if not match:
        return 0
    return int(match.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2)]


def io_sizes(label: str, seconds: int) -> dict:
    """The target's disk I/O size histogram (brw_stats ``disk_io_size``) over the range; since
    the target was mounted when nothing moved in the range."""
    source = source_for(seconds)
    statements = queries.io_sizes_statements(
        source, Scope.target(label).where, seconds, LATEST_WINDOW_SECONDS
    )
    in_range, since_mount = influx.query_tagged(statements, epoch="s")
    points, period = in_range, "range"
    if not any((p.get("read") or 0) + (p.get("write") or 0) for p in points):
        points, period = since_mount, "since mount"
    points = sorted(points, key=lambda p: _bucket_bytes(p.get("bucket", "")))
    return {
        "buckets": [p.get("bucket", "") for p in points],
        "series": {
            "read": [p.get("read") or 0 for p in points],
            "write": [p.get("write") or 0 for p in points],
        },
        "period": period,
        "unit": "I/Os",
    }
