"""Is an OST slow at the array or is its OSS busy? The figures of a window read from InfluxDB
(its volume's latency at the array, its service time at its server, the server's CPU and its
other OSTs) and judged by ``rules.slowness``: for the target page and the analytics report."""

from __future__ import annotations

import time
from collections import defaultdict

from metrics.influxql import arrays as queries
from metrics.influxql.common import RAW, Source
from portal import influxdb as influx
from portal.health.models import HealthSettings
from portal.health.rules import slowness
from portal.health.services.facts import cpu_idle_percent
from portal.inventory.choices import TargetKind
from portal.inventory.models import Target
from sensors import schema

# The target page judges the last few minutes: several of the array collector's rounds (60 s).
PAGE_WINDOW_SECONDS = 300


def _ends(row: dict, fields: tuple[str, ...]) -> tuple[dict, dict]:
    first = {f: row.get(f"first_{f}") for f in fields}
    last = {f: row.get(f"last_{f}") for f in fields}
    return first, last


def diagnose_targets(
    targets: list[Target], since: float, until: float, source: Source = RAW
) -> dict[str, slowness.Diagnosis]:
    """Each OST's diagnosis over the window, by its label. Targets need ``volume_group__array``,
    ``primary_server`` and ``failover_server``; one request to InfluxDB for all of them."""
    if not targets:
        return {}
    arrays = sorted({t.volume_group.array.name for t in targets})
    servers = sorted(
        {t.primary_server.hostname for t in targets} | {t.failover_server.hostname for t in targets}
    )
    volume_rows, service_rows, cpu_rows = influx.query_tagged(
        [
            queries.volume_latency_statement(source, arrays, since, until),
            queries.service_time_statement(source, servers, since, until),
            queries.server_cpu_statement(source, servers, since, until),
        ],
        epoch="s",
    )
    volumes: dict[str, list[slowness.VolumeLatency]] = defaultdict(list)
    for row in volume_rows:
        volumes[row.get(schema.ARRAY) or ""].append(
            slowness.VolumeLatency(
                array=row.get(schema.ARRAY) or "",
                volume=row.get(schema.VOLUME) or "",
                volume_group=row.get(schema.VOLUME_GROUP) or "",
                read_iops=row.get("read_iops") or 0.0,
                write_iops=row.get("write_iops") or 0.0,
                read_ms=row.get("read_latency_ms") or 0.0,
                write_ms=row.get("write_latency_ms") or 0.0,
            )
        )
    # Each OST's service time on each server that reported it, and how many calls it served
    # there: the server that served most of the window is the one judged.
    served: dict[str, dict[str, tuple[float, float | None]]] = defaultdict(dict)
    for row in service_rows:
        first, last = _ends(row, queries.SERVICE_TIME_FIELDS)
        calls = sum((last.get(f) or 0) - (first.get(f) or 0) for f in ("read_calls", "write_calls"))
        label = schema.target_label(row.get(schema.FS) or "", row.get(schema.TARGET) or "")
        served[label][row.get(schema.SERVER) or ""] = (calls, slowness.service_ms(first, last))
    cpu: dict[str, float | None] = {}
    for row in cpu_rows:
        first, last = _ends(row, schema.CPU_FIELDS)
        idle = cpu_idle_percent(first, last)
        cpu[row.get(schema.SERVER) or ""] = None if idle is None else 100.0 - idle
    busy_from = 100.0 - HealthSettings.load().cpu_idle_warning_percent
    found = {}
    for target in targets:
        group = target.volume_group
        array = group.array.name
        mine = [v for v in volumes.get(array, []) if v.volume_group == group.name]
        others = [v for v in volumes.get(array, []) if v.volume_group != group.name]
        # An idle volume answers in 0 ms: judge by the volumes that worked, if any did.
        mine = [v for v in mine if v.iops > 0] or mine
        others = [v for v in others if v.iops > 0] or others
        on = served.get(target.label, {})
        server = max(on, key=lambda host: on[host][0]) if on else target.primary_server.hostname
        other_osts = [
            times[server][1]
            for label, times in served.items()
            if label != target.label and server in times and times[server][1] is not None
        ]
        found[target.label] = slowness.diagnose(
            target=target.label,
            server=server,
            volume=max(mine, key=lambda v: v.iops).volume if mine else "",
            volume_group=group.name,
            array=array,
            array_ms=slowness.volume_group_ms(mine),
            others_ms=slowness.typical_ms([v.ms for v in others]),
            service=on.get(server, (0, None))[1],
            other_osts_ms=slowness.typical_ms(other_osts),
            cpu_percent=cpu.get(server),
            cpu_busy_percent=busy_from,
        )
    return found


def diagnose_target(target: Target, now: float | None = None) -> slowness.Diagnosis | None:
    """The target page's diagnosis of the last minutes; None for a target that is not an OST
    or when InfluxDB does not answer (the page says so elsewhere)."""
    if target.kind != TargetKind.OST:
        return None
    until = time.time() if now is None else now
    try:
        found = diagnose_targets([target], until - PAGE_WINDOW_SECONDS, until)
    except influx.InfluxError:
        return None
    return found.get(target.label)
