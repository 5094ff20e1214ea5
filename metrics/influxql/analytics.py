"""The points the analytics report is computed from (``portal.analytics``, DESIGN.md §9)."""

from __future__ import annotations

from metrics.influxql.common import (
    POLICY_STEPS,
    Source,
    between,
    quote_identifier,
    quote_string,
    tags,
)
from sensors import schema

# What the analytics read of each measurement (DESIGN.md §9).
ANALYTICS_FIELDS = {
    schema.OST.name: (
        "read_bytes",
        "write_bytes",
        "read_calls",
        "write_calls",
        *schema.CAPACITY_FIELDS,
    ),
    schema.OST_JOB.name: ("read_bytes", "write_bytes", "read_calls", "write_calls"),
    schema.OST_CLIENT.name: ("read_bytes", "write_bytes", "read_calls", "write_calls"),
    schema.BRW.name: ("read_ios", "write_ios"),
}
ANALYTICS_BRW_SECTIONS = ("disk_io_size", "pages_per_bulk_rw")
_BRW_SECTIONS = "({})".format(
    " OR ".join(
        f"{quote_identifier(schema.SECTION)} = {quote_string(s)}" for s in ANALYTICS_BRW_SECTIONS
    )
)


def analytics_statements(source: Source, where: str, since: float, until: float) -> list[str]:
    """The points the analytics report is computed from, per series: ``ost``, ``ost_job`` and
    ``ost_client`` as the first value of the window and the last of each step (counters
    telescope, so the window's sum is exact and each step's increment is there for the heat
    maps and for since when); ``brw`` histograms as the first and last value of the window
    only."""
    condition = f"{where} AND {between(since, until)}" if where else between(since, until)
    statements = []
    for measurement in (schema.OST, schema.OST_JOB, schema.OST_CLIENT, schema.BRW):
        fields = ANALYTICS_FIELDS[measurement.name]
        if measurement is schema.BRW:
            where_brw = f"{condition} AND {_BRW_SECTIONS}"
            for selector in ("first", "last"):
                statements.append(_selected(source, measurement, selector, fields, where_brw, ""))
            continue
        statements.append(_selected(source, measurement, "first", fields, condition, ""))
        statements.append(
            _selected(source, measurement, "last", fields, condition, f"time({source.step}s), ")
            + " fill(none)"
        )
    return statements


def analytics_hour_statements(
    minute: Source, hour: Source, where: str, since: float, edge: float, until: float
) -> list[str]:
    """For a long window, the same points mostly from the hour means: per series of ``ost``,
    ``ost_job`` and ``ost_client``, the first minute mean of the window's first hour, the last
    hour mean of each of ``hour``'s steps up to ``edge`` (the hours the continuous query has
    written; each hour mean as it is when the step is an hour), and the last minute mean after
    it; ``brw`` as the first minute mean of the first hour and the last of the window after
    ``edge``. The hours hold no calls: the window's calls are counted from edge to edge,
    nothing per step needs them."""
    head, body, tail = (
        between(since, min(since + 3600, until)),
        between(since, edge - 1),
        between(edge, until),
    )
    statements = []
    for measurement in (schema.OST, schema.OST_JOB, schema.OST_CLIENT, schema.BRW):
        fields = ANALYTICS_FIELDS[measurement.name]
        condition = where
        if measurement is schema.BRW:
            condition = f"{where} AND {_BRW_SECTIONS}" if where else _BRW_SECTIONS

        def within(time_range: str, condition: str = condition) -> str:
            return f"{condition} AND {time_range}" if condition else time_range

        statements.append(_selected(minute, measurement, "first", fields, within(head), ""))
        if measurement is not schema.BRW and hour.step == POLICY_STEPS[hour.policy]:
            # A step of one hour is each hour mean as it is: read raw, InfluxDB 1.6 answers it
            # 2.5-3 times sooner than the same rows as last() per step.
            statements.append(_selected(hour, measurement, "", _stepped(fields), within(body), ""))
        elif measurement is not schema.BRW:
            statements.append(
                _selected(
                    hour,
                    measurement,
                    "last",
                    _stepped(fields),
                    within(body),
                    f"time({hour.step}s), ",
                )
                + " fill(none)"
            )
        statements.append(_selected(minute, measurement, "last", fields, within(tail), ""))
    return statements


def _stepped(fields: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(field for field in fields if not field.endswith("_calls"))


def _selected(
    source: Source,
    measurement: schema.Measurement,
    selector: str,
    fields: tuple[str, ...],
    where: str,
    grouped: str,
) -> str:
    """``selector`` of each field per series (grouped by ``grouped`` too), or with no selector
    ("") each point's fields as they are."""
    columns = ", ".join(
        f"{selector}({source.field(f)}) AS {quote_identifier(f)}"
        if selector
        else f"{source.field(f)} AS {quote_identifier(f)}"
        for f in fields
    )
    return (
        f"SELECT {columns} FROM {source.measurement(measurement.name)} WHERE {where} "
        f"GROUP BY {grouped}{tags(measurement.tags)}"
    )


def analytics_oldest_statement(source: Source, since: float, until: float) -> str:
    """The oldest OST statistics point in the window: where the data really starts (a young
    rack's is shorter than the window asked for)."""
    return (
        f"SELECT first({source.field('write_bytes')}) "
        f"FROM {source.measurement(schema.OST.name)} WHERE {between(since, until)}"
    )
