"""The portal's health views as Grafana dashboards: the filesystem (the dashboard page), an SSU,
a server and a target (the drill-down pages), on the InfluxDB schema of DESIGN.md §6.

Counters are cumulative: rates are ``non_negative_derivative`` per series (one target on one
server), summed afterwards, so a failover does not show as a jump. Panels read the raw policy
(the database's default, 7 days); the portal's own charts switch to the 1-minute and 1-hour
means for longer ranges.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import bargauge, common, dashboard, stat, table, timeseries
from grafana_foundation_sdk.models import common as common_models
from grafana_foundation_sdk.models import dashboard as dashboard_models

from dashboards.influxql import DATASOURCE, Query

TAGS = ["ostara", "lustre"]
REFRESH = "10s"


def _variable(name: str, label: str, query: str) -> dashboard.QueryVariable:
    return (
        dashboard.QueryVariable(name)
        .label(label)
        .query(query)
        .datasource(DATASOURCE)
        .refresh(dashboard_models.VariableRefresh.ON_DASHBOARD_LOAD)
        .sort(dashboard_models.VariableSort.ALPHABETICAL_ASC)
    )


def _rate(
    measurement: str, fields: dict[str, str], where: str, per_series: str = '"target", "server"'
) -> str:
    """Per-second rates of counters, per series first and summed after."""
    inner = ", ".join(
        f'non_negative_derivative(last("{field}"), 1s) AS "{name}"'
        for name, field in fields.items()
    )
    outer = ", ".join(f'sum("{name}") AS "{name}"' for name in fields)
    return (
        f'SELECT {outer} FROM (SELECT {inner} FROM "{measurement}" WHERE {where} AND $timeFilter '
        f"GROUP BY time($__interval), {per_series}) WHERE $timeFilter "
        "GROUP BY time($__interval) fill(none)"
    )


def _rate_by(measurement: str, field: str, where: str, by: str) -> str:
    """One series per value of tag ``by``: the rate of ``field`` summed over its series."""
    return (
        f'SELECT sum("rate") FROM (SELECT non_negative_derivative(last("{field}"), 1s) AS "rate" '
        f'FROM "{measurement}" WHERE {where} AND $timeFilter '
        f'GROUP BY time($__interval), "target", "server") WHERE $timeFilter '
        f'GROUP BY time($__interval), "{by}" fill(none)'
    )


def _timeseries(title: str, unit: str, *queries: Query, width: int = 12) -> timeseries.Panel:
    panel = (
        timeseries.Panel()
        .title(title)
        .datasource(DATASOURCE)
        .unit(unit)
        .span(width)
        .height(8)
        .line_width(1)
        .fill_opacity(10)
    )
    for query in queries:
        panel = panel.with_target(query)
    return panel


def _bars(title: str, unit: str, query: Query, width: int = 12, maximum: float | None = None):
    panel = (
        bargauge.Panel()
        .title(title)
        .datasource(DATASOURCE)
        .unit(unit)
        .span(width)
        .height(8)
        .min(0)
        .display_mode(common_models.BarGaugeDisplayMode.BASIC)
        .reduce_options(common.ReduceDataOptions().calcs(["lastNotNull"]))
        .with_target(query)
    )
    return panel.max(maximum) if maximum is not None else panel


def _fill_by_target(where: str) -> Query:
    return Query(
        'SELECT 100 * (last("kbytes_total") - last("kbytes_free")) / '
        '(last("kbytes_total") - last("kbytes_free") + last("kbytes_avail")) AS "fill" '
        f'FROM "ost" WHERE {where} AND $timeFilter GROUP BY "target"'
    ).alias("$tag_target")


def _oss_bytes(where: str) -> Query:
    return Query(
        'SELECT sum("moved") FROM (SELECT spread("read_bytes") + spread("write_bytes") AS "moved" '
        f'FROM "ost" WHERE {where} AND $timeFilter GROUP BY "target", "server") GROUP BY "server"'
    ).alias("$tag_server")


def _throughput(where: str) -> Query:
    return Query(_rate("ost", {"read": "read_bytes", "write": "write_bytes"}, where))


def filesystem() -> dashboard.Dashboard:
    where = '"fs" =~ /^$fs$/'
    return (
        dashboard.Dashboard("Ostara · filesystem")
        .uid("ostara-filesystem")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(_variable("fs", "Filesystem", 'SHOW TAG VALUES FROM "ost" WITH KEY = "fs"'))
        .with_panel(_timeseries("Throughput", "Bps", _throughput(where), width=24))
        .with_panel(
            _bars("Capacity used per OST (OST balance)", "percent", _fill_by_target(where), 16, 100)
        )
        .with_panel(
            stat.Panel()
            .title("Capacity used in total")
            .datasource(DATASOURCE)
            .unit("percent")
            .span(8)
            .height(8)
            .min(0)
            .max(100)
            .with_target(
                Query(
                    'SELECT 100 * sum("used") / (sum("used") + sum("avail")) AS "fill" FROM '
                    '(SELECT last("kbytes_total") - last("kbytes_free") AS "used", '
                    'last("kbytes_avail") AS "avail" '
                    f'FROM "ost" WHERE {where} AND $timeFilter GROUP BY "target")'
                )
            )
        )
        .with_panel(_bars("Bytes moved per OSS (OSS balance)", "bytes", _oss_bytes(where)))
        .with_panel(
            _timeseries(
                "Throughput per OSS",
                "Bps",
                Query(_rate_by("ost", "write_bytes", where, "server"))
                .ref_id("A")
                .alias("$tag_server write"),
                Query(_rate_by("ost", "read_bytes", where, "server"))
                .ref_id("B")
                .alias("$tag_server read"),
            )
        )
        .with_panel(
            table.Panel()
            .title("Sensors: last round and its cost")
            .datasource(DATASOURCE)
            .span(24)
            .height(7)
            .with_target(
                Query(
                    'SELECT last("collect_seconds") AS "collect seconds", '
                    'last("parse_errors") AS "parse errors", '
                    'last("spooled_points") AS "spooled points" '
                    'FROM "sensor" WHERE $timeFilter GROUP BY "server"'
                ).table()
            )
        )
    )


def ssu() -> dashboard.Dashboard:
    where = '"ssu" =~ /^$ssu$/'
    return (
        dashboard.Dashboard("Ostara · SSU")
        .uid("ostara-ssu")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(_variable("ssu", "SSU", 'SHOW TAG VALUES FROM "ost" WITH KEY = "ssu"'))
        .with_panel(_timeseries("Throughput", "Bps", _throughput(where)))
        .with_panel(
            _timeseries(
                "Write throughput per OSS",
                "Bps",
                Query(_rate_by("ost", "write_bytes", where, "server")).alias("$tag_server"),
            )
        )
        .with_panel(_bars("Capacity used per OST", "percent", _fill_by_target(where), 16, 100))
        .with_panel(_bars("Bytes moved per OSS", "bytes", _oss_bytes(where), 8))
    )


def server() -> dashboard.Dashboard:
    where = '"server" =~ /^$server$/'
    cpu_kinds = ("user", "system", "iowait", "idle")
    return (
        dashboard.Dashboard("Ostara · server")
        .uid("ostara-server")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(
            _variable("server", "Server", 'SHOW TAG VALUES FROM "node" WITH KEY = "server"')
        )
        .with_panel(
            _timeseries(
                "CPU (share of time)",
                "percentunit",
                Query(
                    _rate(
                        "node",
                        {kind: f"cpu_{kind}" for kind in cpu_kinds},
                        where,
                        per_series='"server"',
                    )
                ),
            ).stacking(common.StackingConfig().mode(common_models.StackingMode.PERCENT))
        )
        .with_panel(
            _timeseries(
                "Memory used",
                "percent",
                Query(
                    'SELECT 100 * (1 - last("mem_available_kb") / last("mem_total_kb")) '
                    f'AS "used" FROM "node" WHERE {where} AND $timeFilter '
                    "GROUP BY time($__interval) fill(none)"
                ),
            )
        )
        .with_panel(
            _timeseries(
                "Temperatures (BMC)",
                "celsius",
                Query(
                    f'SELECT mean("value") FROM "bmc" WHERE {where} AND "type" = \'temperature\' '
                    'AND $timeFilter GROUP BY time($__interval), "sensor" fill(none)'
                ).alias("$tag_sensor"),
            )
        )
        .with_panel(
            _timeseries(
                "LNet traffic",
                "Bps",
                Query(
                    _rate(
                        "lnet",
                        {"send": "send_bytes", "receive": "recv_bytes"},
                        where,
                        per_series='"server"',
                    )
                ),
            )
        )
        .with_panel(
            _timeseries("Target throughput on this server", "Bps", _throughput(where), width=24)
        )
    )


def target() -> dashboard.Dashboard:
    where = '"fs" =~ /^$fs$/ AND "target" =~ /^$target$/'
    return (
        dashboard.Dashboard("Ostara · target")
        .uid("ostara-target")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(_variable("fs", "Filesystem", 'SHOW TAG VALUES FROM "ost" WITH KEY = "fs"'))
        .with_variable(
            _variable(
                "target",
                "Target",
                'SHOW TAG VALUES FROM "ost" WITH KEY = "target" WHERE "fs" =~ /^$fs$/',
            )
        )
        .with_panel(_timeseries("Throughput", "Bps", _throughput(where)))
        .with_panel(
            _timeseries(
                "IOPS",
                "iops",
                Query(_rate("ost", {"read": "read_calls", "write": "write_calls"}, where)),
            )
        )
        .with_panel(
            _timeseries(
                "Fill",
                "percent",
                Query(
                    'SELECT 100 * (last("kbytes_total") - last("kbytes_free")) / '
                    '(last("kbytes_total") - last("kbytes_free") + last("kbytes_avail")) '
                    f'AS "fill" FROM "ost" WHERE {where} AND $timeFilter '
                    "GROUP BY time($__interval) fill(none)"
                ),
            )
        )
        .with_panel(
            _bars(
                "Disk I/O sizes in the range (brw_stats)",
                "short",
                Query(
                    'SELECT sum("ios") FROM (SELECT spread("read_ios") + spread("write_ios") '
                    f'AS "ios" FROM "brw" WHERE {where} AND "section" = \'disk_io_size\' '
                    'AND $timeFilter GROUP BY "bucket", "server") GROUP BY "bucket"'
                ).alias("$tag_bucket"),
            )
        )
    )


DASHBOARDS = {
    "ostara-filesystem": filesystem,
    "ostara-ssu": ssu,
    "ostara-server": server,
    "ostara-target": target,
}
