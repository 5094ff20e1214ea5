"""The InfluxQL texts of the Grafana panels (``dashboards.views``): raw points over the
dashboard's range (``$timeFilter``) in its step (``$__interval``); ``$name`` is a dashboard
variable."""

from __future__ import annotations

from metrics.influxql.common import PER_TARGET, quote_identifier, rate_statement
from metrics.quantities import fill_expression, used_percent_expression

# Grafana fills these in: the dashboard's time range and its step.
GRAFANA_WINDOW = "$timeFilter"
GRAFANA_STEP = "$__interval"


def grafana_rate_statement(
    measurement: str,
    fields: dict[str, str],
    where: str,
    per_series: tuple[str, ...] = PER_TARGET,
    by: tuple[str, ...] = (),
    carry: bool = False,
) -> str:
    """``rate_statement`` over the Grafana dashboard's range and step (raw points)."""
    return rate_statement(
        measurement,
        fields,
        where,
        inner_window=GRAFANA_WINDOW,
        outer_window=GRAFANA_WINDOW,
        step=GRAFANA_STEP,
        per_series=per_series,
        by=by,
        carry=carry,
    )


def grafana_match(tag: str, variable: str) -> str:
    """The tag matches the dashboard variable (all of its selected values)."""
    return f"{quote_identifier(tag)} =~ /^${variable}$/"


def grafana_tag_values(measurement: str, key: str, where: str = "") -> str:
    text = (
        f"SHOW TAG VALUES FROM {quote_identifier(measurement)} WITH KEY = {quote_identifier(key)}"
    )
    return f"{text} WHERE {where}" if where else text


# An OST's fill of its newest capacity fields (``metrics.quantities.ost_fill_percent``).
OST_FILL = fill_expression('(last("kbytes_total") - last("kbytes_free"))', 'last("kbytes_avail")')
# The fill of several OSTs together, of a subquery's "used" and "avail" per OST.
POOLED_FILL = fill_expression('sum("used")', 'sum("avail")')
MEMORY_USED = used_percent_expression('last("mem_total_kb")', 'last("mem_available_kb")')


def grafana_fill_by_target(where: str) -> str:
    return (
        f'SELECT {OST_FILL} AS "fill" '
        f'FROM "ost" WHERE {where} AND {GRAFANA_WINDOW} GROUP BY "target"'
    )


def grafana_top(per_tag: str, field: str, tag: str, count: int) -> str:
    """The ``count`` greatest values of ``field`` of a query grouped by ``tag`` (the fullest
    OSTs, the busiest OSSs), one row each: a table of the value and the tag."""
    quote = quote_identifier
    return f"SELECT top({quote(field)}, {quote(tag)}, {count}) AS {quote(field)} FROM ({per_tag})"


def grafana_fill_spread(where: str) -> str:
    """The least, median and greatest OST fill."""
    return (
        'SELECT min("fill") AS "emptiest", median("fill") AS "median", max("fill") AS "fullest" '
        f"FROM ({grafana_fill_by_target(where)})"
    )


def grafana_fill(where: str) -> str:
    return (
        f'SELECT {OST_FILL} AS "fill" FROM "ost" WHERE {where} AND {GRAFANA_WINDOW} '
        f"GROUP BY time({GRAFANA_STEP}) fill(none)"
    )


def grafana_total_fill(where: str) -> str:
    return (
        f'SELECT {POOLED_FILL} AS "fill" FROM '
        '(SELECT last("kbytes_total") - last("kbytes_free") AS "used", '
        'last("kbytes_avail") AS "avail" '
        f'FROM "ost" WHERE {where} AND {GRAFANA_WINDOW} GROUP BY "target")'
    )


def grafana_oss_bytes(where: str) -> str:
    return (
        'SELECT sum("moved") AS "moved" FROM (SELECT spread("read_bytes") + spread("write_bytes") '
        f'AS "moved" FROM "ost" WHERE {where} AND {GRAFANA_WINDOW} GROUP BY "target", "server") '
        'GROUP BY "server"'
    )


def grafana_rate_spread(rate_by_server: str) -> str:
    """The busiest, mean and least busy server of a rate per server, over time."""
    return (
        'SELECT max("rate") AS "busiest", mean("rate") AS "mean", min("rate") AS "least busy" '
        f"FROM ({rate_by_server}) WHERE {GRAFANA_WINDOW} "
        f"GROUP BY time({GRAFANA_STEP}) fill(none)"
    )


def grafana_sensor_table() -> str:
    return (
        'SELECT last("collect_seconds") AS "collect seconds", '
        'last("parse_errors") AS "parse errors", '
        'last("spooled_points") AS "spooled points" '
        f'FROM "sensor" WHERE {GRAFANA_WINDOW} GROUP BY "server"'
    )


def grafana_memory(where: str) -> str:
    return (
        f"SELECT {MEMORY_USED} "
        f'AS "used" FROM "node" WHERE {where} AND {GRAFANA_WINDOW} '
        f"GROUP BY time({GRAFANA_STEP}) fill(none)"
    )


def grafana_temperatures(where: str) -> str:
    return (
        f'SELECT mean("value") FROM "bmc" WHERE {where} AND "type" = \'temperature\' '
        f'AND {GRAFANA_WINDOW} GROUP BY time({GRAFANA_STEP}), "sensor" fill(none)'
    )


def grafana_io_sizes(where: str) -> str:
    return (
        'SELECT sum("ios") FROM (SELECT spread("read_ios") + spread("write_ios") '
        f'AS "ios" FROM "brw" WHERE {where} AND "section" = \'disk_io_size\' '
        f'AND {GRAFANA_WINDOW} GROUP BY "bucket", "server") GROUP BY "bucket"'
    )


# The arrays report MB/s (10^6 bytes); the panels show bytes/s in the portal's binary units.
MEGABYTE = 1_000_000


def grafana_array_figures(
    measurement: str, fields: dict[str, str], where: str, by: tuple[str, ...], scale: int = 1
) -> str:
    """The mean of an array's figures (`array_volume`, `array_drive`, ...: gauges the array
    averaged itself) in each step, one series per value of the tags ``by``; named by the keys
    of ``fields``, multiplied by ``scale``."""
    factor = f" * {scale}" if scale != 1 else ""
    selects = ", ".join(
        f"mean({quote_identifier(field)}){factor} AS {quote_identifier(name)}"
        for name, field in fields.items()
    )
    groups = "".join(f", {quote_identifier(tag)}" for tag in by)
    return (
        f"SELECT {selects} FROM {quote_identifier(measurement)} "
        f"WHERE {where} AND {GRAFANA_WINDOW} GROUP BY time({GRAFANA_STEP}){groups} fill(none)"
    )


def grafana_kernel_lines(where: str) -> str:
    """The newest Lustre and LNet kernel lines in the range (``sensors.kmsg``), for a table."""
    return (
        'SELECT "server", "severity", "message_number", "message" FROM "kernel_log" '
        f"WHERE {where} AND {GRAFANA_WINDOW} ORDER BY time DESC LIMIT 100"
    )


def grafana_owner_space(where: str, kind: str) -> str:
    """Each owner's (user, group or project id) space on the filesystem over time: its newest
    accounting per target, summed per owner."""
    return (
        'SELECT sum("kbytes") * 1024 AS "bytes" FROM (SELECT last("kbytes") AS "kbytes" '
        f'FROM "owner_usage" WHERE {where} AND "kind" = \'{kind}\' AND {GRAFANA_WINDOW} '
        f'GROUP BY time({GRAFANA_STEP}), "target", "id") '
        f'WHERE {GRAFANA_WINDOW} GROUP BY time({GRAFANA_STEP}), "id" fill(none)'
    )
