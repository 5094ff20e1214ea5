"""The InfluxQL texts of the portal's charts (``portal.health.services.charts``), over a
``Source``: the raw points or a downsampled policy."""

from __future__ import annotations

from metrics.influxql.common import (
    PER_TARGET,
    Source,
    quote_identifier,
    rate_statement,
    window,
)
from sensors import schema


def chart_rate_statement(
    measurement: str,
    fields: dict[str, str],
    where: str,
    source: Source,
    seconds: int,
    per_series: tuple[str, ...] = PER_TARGET,
) -> str:
    """``rate_statement`` over the last ``seconds`` in the source's step (the portal's charts)."""
    return rate_statement(
        measurement,
        fields,
        where,
        source=source,
        inner_window=window(seconds + source.step),
        outer_window=window(seconds),
        step=f"{source.step}s",
        per_series=per_series,
    )


def oldest_point_statement(source: Source, measurement: str, field: str, seconds: int) -> str:
    """The oldest point of a field within the range (how old a young rack's data is)."""
    return (
        f"SELECT first({source.field(field)}) FROM {source.measurement(measurement)} "
        f"WHERE {window(seconds)}"
    )


def _last_in_buckets(
    source: Source, measurement: str, columns: dict[str, str], where: str, seconds: int
) -> str:
    """The last value of each field (``columns``: output name -> field) per time bucket."""
    selected = ", ".join(f"last({source.field(f)}) AS {name}" for name, f in columns.items())
    return (
        f"SELECT {selected} FROM {source.measurement(measurement)} WHERE {where} "
        f"AND {window(seconds)} GROUP BY time({source.step}s) fill(none)"
    )


def memory_statement(source: Source, where: str, seconds: int) -> str:
    columns = {"total": "mem_total_kb", "available": "mem_available_kb"}
    return _last_in_buckets(source, schema.NODE.name, columns, where, seconds)


def temperatures_statement(source: Source, where: str, seconds: int) -> str:
    return (
        f"SELECT mean({source.field('value')}) AS value "
        f"FROM {source.measurement(schema.BMC.name)} "
        f"WHERE {where} AND {quote_identifier(schema.TYPE)} = 'temperature' "
        f"AND {window(seconds)} GROUP BY time({source.step}s), {schema.SENSOR} fill(none)"
    )


def target_fill_statement(source: Source, where: str, seconds: int) -> str:
    columns = {"total": "kbytes_total", "free": "kbytes_free", "avail": "kbytes_avail"}
    return _last_in_buckets(source, schema.OST.name, columns, where, seconds)


def capacity_statement(where: str, seconds: int) -> str:
    """Each OST's newest capacity."""
    return (
        "SELECT last(kbytes_total) AS total, last(kbytes_free) AS free, "
        f"last(kbytes_avail) AS avail FROM {schema.OST.name} WHERE {where} "
        f"AND {window(seconds)} GROUP BY {schema.FS}, {schema.TARGET}"
    )


def oss_share_statement(source: Source, where: str, seconds: int) -> str:
    """Bytes read and written per series over the range (``spread`` of the counter)."""
    return (
        f"SELECT spread({source.field('read_bytes')}) AS rb, "
        f"spread({source.field('write_bytes')}) AS wb "
        f"FROM {source.measurement(schema.OST.name)} WHERE {where} AND {window(seconds)} "
        f"GROUP BY {schema.TARGET}, {schema.SERVER}"
    )


def io_sizes_statements(source: Source, where: str, seconds: int, latest: int) -> list[str]:
    """The disk I/O size histogram over the range, and since the target was mounted."""
    where = f"{where} AND {quote_identifier(schema.SECTION)} = 'disk_io_size'"
    by = f"{schema.BUCKET}, {schema.SERVER}"
    return [
        f'SELECT sum(r) AS "read", sum(w) AS "write" FROM (SELECT '
        f"spread({source.field('read_ios')}) AS r, spread({source.field('write_ios')}) AS w "
        f"FROM {source.measurement(schema.BRW.name)} WHERE {where} AND {window(seconds)} "
        f"GROUP BY {by}) GROUP BY {schema.BUCKET}",
        f'SELECT sum(r) AS "read", sum(w) AS "write" FROM (SELECT last(read_ios) AS r, '
        f"last(write_ios) AS w FROM {schema.BRW.name} WHERE {where} AND {window(latest)} "
        f"GROUP BY {by}) GROUP BY {schema.BUCKET}",
    ]
