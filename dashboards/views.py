"""The portal's health views as Grafana dashboards: the filesystem (the dashboard page), an SSU,
a server and a target (the drill-down pages), on the InfluxDB schema of DESIGN.md §6.

Counters are cumulative: rates are ``non_negative_derivative`` per series (one target on one
server), summed afterwards, so a failover does not show as a jump. Panels read the raw policy
(the database's default, 7 days); the portal's own charts switch to the 1-minute and 1-hour
means for longer ranges. The InfluxQL texts are ``metrics.influxql.grafana``'s, on the
charts' common parts (``metrics.influxql.common``).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import bargauge, common, dashboard, stat, table, timeseries
from grafana_foundation_sdk.models import common as common_models
from grafana_foundation_sdk.models import dashboard as dashboard_models

from metrics.chart_rows import SHOWN
from metrics.influxql import grafana as queries
from metrics.influxql.common import PER_SERVER, PER_TARGET
from metrics.influxql.grafana_target import DATASOURCE, Query
from sensors import schema

TAGS = ["ostara", "lustre"]
REFRESH = "10s"
# A filesystem's panels show its top OSTs and OSSs (a 100-SSU one has 2,400 and 200) and the
# spread of all; the SSU dashboard shows every one of its own. The portal's charts alike.
TOP = SHOWN


def _variable(name: str, label: str, query: str) -> dashboard.QueryVariable:
    return (
        dashboard.QueryVariable(name)
        .label(label)
        .query(query)
        .datasource(DATASOURCE)
        .refresh(dashboard_models.VariableRefresh.ON_DASHBOARD_LOAD)
        .sort(dashboard_models.VariableSort.ALPHABETICAL_ASC)
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


def _bars(
    title: str,
    unit: str,
    query: Query,
    width: int = 12,
    maximum: float | None = None,
    row_field: str | None = None,
):
    """A bar per series; with ``row_field``, a bar per row of a table query (that field, named
    by the row's tag)."""
    reduce = common.ReduceDataOptions().calcs(["lastNotNull"])
    return (
        _gauge(bargauge.Panel(), title, unit, query, width, maximum)
        .display_mode(common_models.BarGaugeDisplayMode.BASIC)
        .reduce_options(reduce.values(True).fields(f"/^{row_field}$/") if row_field else reduce)
    )


def _stat(title: str, unit: str, query: Query, width: int, maximum: float | None = None):
    return _gauge(stat.Panel(), title, unit, query, width, maximum)


def _gauge(panel, title: str, unit: str, query: Query, width: int, maximum: float | None):
    """A panel of values from 0 (to ``maximum``)."""
    panel = (
        panel.title(title)
        .datasource(DATASOURCE)
        .unit(unit)
        .span(width)
        .height(8)
        .min(0)
        .with_target(query)
    )
    return panel.max(maximum) if maximum is not None else panel


def _fill_by_target(where: str) -> Query:
    return Query(queries.grafana_fill_by_target(where)).alias("$tag_target")


def _oss_bytes(where: str) -> Query:
    return Query(queries.grafana_oss_bytes(where)).alias("$tag_server")


def _throughput(where: str) -> Query:
    return Query(
        queries.grafana_rate_statement(
            schema.OST.name, {"read": "read_bytes", "write": "write_bytes"}, where
        )
    )


def _rate_by(field: str, where: str, by: str) -> str:
    """One series per value of tag ``by``: the rate of an `ost` field summed over its series."""
    return queries.grafana_rate_statement(schema.OST.name, {"rate": field}, where, by=(by,))


def filesystem() -> dashboard.Dashboard:
    where = queries.grafana_match(schema.FS, "fs")
    return (
        dashboard.Dashboard("Ostara · filesystem")
        .uid("ostara-filesystem")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(
            _variable("fs", "Filesystem", queries.grafana_tag_values(schema.OST.name, schema.FS))
        )
        .with_panel(_timeseries("Throughput", "binBps", _throughput(where), width=24))
        .with_panel(
            _bars(
                f"The {TOP} fullest OSTs (OST balance; the SSU dashboard has all of its own)",
                "percent",
                Query(
                    queries.grafana_top(
                        queries.grafana_fill_by_target(where), "fill", schema.TARGET, TOP
                    )
                ).table(),
                12,
                100,
                row_field="fill",
            )
        )
        .with_panel(
            _stat(
                "OST fill: emptiest, median, fullest",
                "percent",
                Query(queries.grafana_fill_spread(where)),
                6,
                100,
            )
        )
        .with_panel(
            _stat(
                "Capacity used in total",
                "percent",
                Query(queries.grafana_total_fill(where)),
                6,
                100,
            )
        )
        .with_panel(
            _bars(
                f"Bytes moved by the {TOP} busiest OSSs (OSS balance)",
                "bytes",
                Query(
                    queries.grafana_top(
                        queries.grafana_oss_bytes(where), "moved", schema.SERVER, TOP
                    )
                ).table(),
                row_field="moved",
            )
        )
        .with_panel(
            _timeseries(
                "Throughput per OSS: busiest, mean, least busy",
                "binBps",
                Query(queries.grafana_rate_spread(_rate_by("write_bytes", where, schema.SERVER)))
                .ref_id("A")
                .alias("write $col"),
                Query(queries.grafana_rate_spread(_rate_by("read_bytes", where, schema.SERVER)))
                .ref_id("B")
                .alias("read $col"),
            )
        )
        .with_panel(
            table.Panel()
            .title("Sensors: last round and its cost")
            .datasource(DATASOURCE)
            .span(24)
            .height(7)
            .with_target(Query(queries.grafana_sensor_table()).table())
        )
        .with_panel(
            _timeseries(
                "Space by user (quota accounting)",
                "bytes",
                Query(queries.grafana_owner_space(where, "user")).alias("uid $tag_id"),
            )
        )
        .with_panel(
            _timeseries(
                "Space by project (quota accounting)",
                "bytes",
                Query(queries.grafana_owner_space(where, "project")).alias("project $tag_id"),
            )
        )
    )


def ssu() -> dashboard.Dashboard:
    where = queries.grafana_match(schema.SSU, "ssu")
    return (
        dashboard.Dashboard("Ostara · SSU")
        .uid("ostara-ssu")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(
            _variable("ssu", "SSU", queries.grafana_tag_values(schema.OST.name, schema.SSU))
        )
        .with_panel(_timeseries("Throughput", "binBps", _throughput(where)))
        .with_panel(
            _timeseries(
                "Write throughput per OSS",
                "binBps",
                Query(_rate_by("write_bytes", where, schema.SERVER)).alias("$tag_server"),
            )
        )
        .with_panel(_bars("Capacity used per OST", "percent", _fill_by_target(where), 16, 100))
        .with_panel(_bars("Bytes moved per OSS", "bytes", _oss_bytes(where), 8))
    )


def server() -> dashboard.Dashboard:
    where = queries.grafana_match(schema.SERVER, "server")
    # The shares drawn: the other kinds of CPU time are small beside these.
    cpu_kinds = ("user", "system", "iowait", "idle")
    return (
        dashboard.Dashboard("Ostara · server")
        .uid("ostara-server")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(
            _variable(
                "server", "Server", queries.grafana_tag_values(schema.NODE.name, schema.SERVER)
            )
        )
        .with_panel(
            _timeseries(
                "CPU (share of time)",
                "percentunit",
                Query(
                    queries.grafana_rate_statement(
                        schema.NODE.name,
                        {kind: f"cpu_{kind}" for kind in cpu_kinds},
                        where,
                        per_series=PER_SERVER,
                    )
                ),
            ).stacking(common.StackingConfig().mode(common_models.StackingMode.PERCENT))
        )
        .with_panel(
            _timeseries(
                "Memory used",
                "percent",
                Query(queries.grafana_memory(where)),
            )
        )
        .with_panel(
            _timeseries(
                "Temperatures (BMC)",
                "celsius",
                Query(queries.grafana_temperatures(where)).alias("$tag_sensor"),
            )
        )
        .with_panel(
            _timeseries(
                "LNet traffic",
                "binBps",
                Query(
                    queries.grafana_rate_statement(
                        schema.LNET.name,
                        {"send": "send_bytes", "receive": "recv_bytes"},
                        where,
                        per_series=PER_SERVER,
                    )
                ),
            )
        )
        .with_panel(
            _timeseries("Target throughput on this server", "binBps", _throughput(where), width=24)
        )
    )


def target() -> dashboard.Dashboard:
    fs_match = queries.grafana_match(schema.FS, "fs")
    target_match = queries.grafana_match(schema.TARGET, "target")
    where = f"{fs_match} AND {target_match}"
    return (
        dashboard.Dashboard("Ostara · target")
        .uid("ostara-target")
        .tags(TAGS)
        .refresh(REFRESH)
        .time("now-1h", "now")
        .with_variable(
            _variable("fs", "Filesystem", queries.grafana_tag_values(schema.OST.name, schema.FS))
        )
        .with_variable(
            _variable(
                "target",
                "Target",
                queries.grafana_tag_values(
                    schema.OST.name, schema.TARGET, queries.grafana_match(schema.FS, "fs")
                ),
            )
        )
        .with_panel(_timeseries("Throughput", "binBps", _throughput(where)))
        .with_panel(
            _timeseries(
                "IOPS",
                "iops",
                Query(
                    queries.grafana_rate_statement(
                        schema.OST.name, {"read": "read_calls", "write": "write_calls"}, where
                    )
                ),
            )
        )
        .with_panel(
            _timeseries(
                "Fill",
                "percent",
                Query(queries.grafana_fill(where)),
            )
        )
        .with_panel(
            _bars(
                "Disk I/O sizes in the range (brw_stats)",
                "short",
                Query(queries.grafana_io_sizes(where)).alias("$tag_bucket"),
            )
        )
        .with_panel(
            _timeseries(
                "Throughput per client (export stats)",
                "binBps",
                Query(
                    queries.grafana_rate_statement(
                        schema.OST_CLIENT.name,
                        {"moved": "write_bytes"},
                        where,
                        per_series=(*PER_TARGET, schema.CLIENT),
                        by=(schema.CLIENT,),
                        carry=True,
                    )
                ).alias("$tag_client write"),
            )
        )
        .with_panel(
            table.Panel()
            .title("What the kernel said (Lustre and LNet lines)")
            .datasource(DATASOURCE)
            .span(24)
            .height(8)
            .with_target(Query(queries.grafana_kernel_lines(where)).table())
        )
    )


def _array_figures(
    measurement: schema.Measurement,
    fields: dict[str, str],
    where: str,
    by: str,
    scale: int = 1,
) -> Query:
    return Query(
        queries.grafana_array_figures(measurement.name, fields, where, (by,), scale)
    ).alias(f"$tag_{by} $col")


def array() -> dashboard.Dashboard:
    """An array as its controllers report it (the santricity collector, once a minute): a
    volume's latency at the array beside its OST's service time at the server tells a slow
    array from a busy OSS."""
    where = queries.grafana_match(schema.ARRAY, "array")
    read_write = {"read": "read_iops", "write": "write_iops"}
    throughput = {"read": "read_mbps", "write": "write_mbps"}
    latency = {"read": "read_latency_ms", "write": "write_latency_ms"}
    megabyte = queries.MEGABYTE
    return (
        dashboard.Dashboard("Ostara · array")
        .uid("ostara-array")
        .tags([*TAGS, "e-series"])
        .refresh("1m")
        .time("now-3h", "now")
        .with_variable(
            _variable(
                "array",
                "Array",
                queries.grafana_tag_values(schema.ARRAY_VOLUME.name, schema.ARRAY),
            )
        )
        .with_panel(
            _timeseries(
                "Volume latency at the array",
                "ms",
                _array_figures(schema.ARRAY_VOLUME, latency, where, schema.VOLUME),
            )
        )
        .with_panel(
            _timeseries(
                "Volume IOPS",
                "iops",
                _array_figures(schema.ARRAY_VOLUME, read_write, where, schema.VOLUME),
            )
        )
        .with_panel(
            _timeseries(
                "Volume throughput",
                "binBps",
                _array_figures(schema.ARRAY_VOLUME, throughput, where, schema.VOLUME, megabyte),
            )
        )
        .with_panel(
            _timeseries(
                "Drive latency",
                "ms",
                _array_figures(schema.ARRAY_DRIVE, latency, where, schema.ID),
            )
        )
        .with_panel(
            _timeseries(
                "Controller CPU",
                "percent",
                _array_figures(
                    schema.ARRAY_CONTROLLER, {"cpu": "cpu_percent"}, where, schema.CONTROLLER
                ),
            ).max(100)
        )
        .with_panel(
            _timeseries(
                "Controller throughput",
                "binBps",
                _array_figures(
                    schema.ARRAY_CONTROLLER, throughput, where, schema.CONTROLLER, megabyte
                ),
            )
        )
        .with_panel(
            _timeseries(
                "Host interface throughput",
                "binBps",
                _array_figures(
                    schema.ARRAY_INTERFACE, throughput, where, schema.INTERFACE, megabyte
                ),
                width=24,
            )
        )
    )


DASHBOARDS = {
    "ostara-filesystem": filesystem,
    "ostara-ssu": ssu,
    "ostara-server": server,
    "ostara-target": target,
    "ostara-array": array,
}
