"""The statements that read the arrays' own figures (``sensors.santricity``) beside the servers':
a volume's latency at the array, an OST's service time at its server and the server's CPU
over a window (is an OST slow at the array or is its OSS busy?), and the arrays' Major Event
Log entries since a moment (``portal.health.services.slowness`` and ``.array_events``)."""

from __future__ import annotations

from metrics.influxql.common import (
    Source,
    between,
    quote_identifier,
    quote_string,
    servers_condition,
    tags,
)
from sensors import schema

# What a volume's latency is made of: its operations per second weigh its read and write times.
VOLUME_LATENCY_FIELDS = ("read_iops", "write_iops", "read_latency_ms", "write_latency_ms")
# An OST's service time at its server: the sum of its read/write latencies (µs) over their count.
SERVICE_TIME_FIELDS = ("read_usecs", "write_usecs", "read_calls", "write_calls")
# The newest events an answer holds per series (one series per array, object, priority, code).
EVENTS_PER_SERIES = 50


def arrays_condition(names: list[str]) -> str:
    if not names:
        return "false"
    array = quote_identifier(schema.ARRAY)
    return "(" + " OR ".join(f"{array} = {quote_string(name)}" for name in names) + ")"


def volume_latency_statement(source: Source, arrays: list[str], since: float, until: float) -> str:
    """The mean of each volume's operations per second and latencies at the array."""
    columns = ", ".join(
        f"mean({source.field(f)}) AS {quote_identifier(f)}" for f in VOLUME_LATENCY_FIELDS
    )
    return (
        f"SELECT {columns} FROM {source.measurement(schema.ARRAY_VOLUME.name)} "
        f"WHERE {arrays_condition(arrays)} AND {between(since, until)} "
        f"GROUP BY {tags((schema.ARRAY, schema.VOLUME, schema.VOLUME_GROUP))}"
    )


def _first_and_last(
    source: Source,
    measurement: schema.Measurement,
    fields: tuple[str, ...],
    servers: list[str],
    since: float,
    until: float,
    by: tuple[str, ...],
) -> str:
    """The first and last value of counters per series in the window (``first_x``, ``last_x``)."""
    columns = ", ".join(
        f"{selector}({source.field(f)}) AS {quote_identifier(f'{selector}_{f}')}"
        for f in fields
        for selector in ("first", "last")
    )
    return (
        f"SELECT {columns} FROM {source.measurement(measurement.name)} "
        f"WHERE {servers_condition(servers)} AND {between(since, until)} GROUP BY {tags(by)}"
    )


def service_time_statement(source: Source, servers: list[str], since: float, until: float) -> str:
    """Each OST's latency counters on each of these servers, at the window's ends."""
    return _first_and_last(
        source,
        schema.OST,
        SERVICE_TIME_FIELDS,
        servers,
        since,
        until,
        (schema.FS, schema.TARGET, schema.SERVER),
    )


def server_cpu_statement(source: Source, servers: list[str], since: float, until: float) -> str:
    """Each server's CPU counters (jiffies) at the window's ends."""
    return _first_and_last(
        source, schema.NODE, schema.CPU_FIELDS, servers, since, until, (schema.SERVER,)
    )


def array_events_statement(arrays: list[str], since: float, until: float) -> str:
    """The arrays' events in the window, newest first (at most ``EVENTS_PER_SERIES`` per
    series); the tags say which object each names."""
    return (
        f"SELECT {quote_identifier('sequence')}, {quote_identifier('description')} "
        f"FROM {quote_identifier(schema.ARRAY_EVENT.name)} "
        f"WHERE {arrays_condition(arrays)} AND {between(since, until)} "
        f"GROUP BY {tags(schema.ARRAY_EVENT.tags)} ORDER BY time DESC LIMIT {EVENTS_PER_SERIES}"
    )
