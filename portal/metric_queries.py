"""Every InfluxQL text of the portal, on the metric schema of ``sensors.schema`` (DESIGN.md §6):
the retention policies and the continuous queries that fill them (``influxdb_setup``), the
statements behind the health facts (``portal.health.services.evaluation``), the dashboard's
charts (``portal.health.services.charts``) and the Grafana panels (``dashboards.views``).

Texts only: ``portal.influx`` runs them. No Django import, so the dashboards generator and
the benchmarks use it as they are.

Counters are cumulative, so rates are ``non_negative_derivative`` per series (one target on one
server) summed afterwards: a target that fails over starts a new series and is not counted as a
jump. In the downsampled policies a field ``x`` is ``mean_x`` (the continuous queries keep the
mean of every field).
"""

from __future__ import annotations

from dataclasses import dataclass

from sensors import schema

# --- retention policies and continuous queries ------------------------------------------------

RAW_POLICY = "raw"  # what the sensors write; the database's default, so they name none
MINUTE_POLICY = "minute"
HOUR_POLICY = "hour"
MEAN_PREFIX = "mean_"
CQ_PREFIX = "ostara_"


@dataclass(frozen=True)
class RetentionPolicy:
    name: str
    duration: str
    shard_duration: str
    default: bool = False


@dataclass(frozen=True)
class Downsample:
    name: str  # continuous query name, versioned
    into: str  # retention policy written
    every: str  # GROUP BY time(...)
    resample_for: str  # window recomputed at each run


RETENTION_POLICIES = (
    RetentionPolicy(RAW_POLICY, "7d", "1d", default=True),
    RetentionPolicy(MINUTE_POLICY, "90d", "7d"),
    RetentionPolicy(HOUR_POLICY, "1095d", "30d"),
)
DOWNSAMPLES = (
    Downsample(f"{CQ_PREFIX}minute_v1", MINUTE_POLICY, "1m", "10m"),
    Downsample(f"{CQ_PREFIX}hour_v1", HOUR_POLICY, "1h", "2h"),
)
# The time step of each policy's points, in seconds (None: the raw points, a sensor round).
POLICY_STEPS: dict[str | None, int] = {None: 10, MINUTE_POLICY: 60, HOUR_POLICY: 3600}


def quote_identifier(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def show_retention_policies(database: str) -> str:
    return f"SHOW RETENTION POLICIES ON {quote_identifier(database)}"


def retention_policy_statement(verb: str, database: str, policy: RetentionPolicy) -> str:
    """``CREATE`` or ``ALTER`` the policy as wanted."""
    return (
        f"{verb} RETENTION POLICY {quote_identifier(policy.name)} ON {quote_identifier(database)} "
        f"DURATION {policy.duration} REPLICATION 1 SHARD DURATION {policy.shard_duration}"
        + (" DEFAULT" if policy.default else "")
    )


SHOW_CONTINUOUS_QUERIES = "SHOW CONTINUOUS QUERIES"


def drop_continuous_query(database: str, name: str) -> str:
    return f"DROP CONTINUOUS QUERY {quote_identifier(name)} ON {quote_identifier(database)}"


def downsample_select(database: str, downsample: Downsample, where: str = "") -> str:
    db = quote_identifier(database)
    return (
        f"SELECT mean(*) INTO {db}.{quote_identifier(downsample.into)}.:MEASUREMENT "
        f"FROM {db}.{quote_identifier(RAW_POLICY)}./.*/ {where}"
        f"GROUP BY time({downsample.every}), *"
    )


def backfill_select(database: str, downsample: Downsample, hours: int) -> str:
    return downsample_select(database, downsample, f"WHERE time > now() - {int(hours)}h ")


def create_continuous_query(database: str, downsample: Downsample) -> str:
    return (
        f"CREATE CONTINUOUS QUERY {quote_identifier(downsample.name)} "
        f"ON {quote_identifier(database)} "
        f"RESAMPLE EVERY {downsample.every} FOR {downsample.resample_for} "
        f"BEGIN {downsample_select(database, downsample)} END"
    )


# --- where the points of a time range are -----------------------------------------------------


@dataclass(frozen=True)
class Source:
    """Where a range's points come from: a retention policy (None = the default, raw) and the
    GROUP BY step in seconds."""

    policy: str | None
    step: int

    def measurement(self, name: str) -> str:
        if self.policy is None:
            return quote_identifier(name)
        return f"{quote_identifier(self.policy)}.{quote_identifier(name)}"

    def field(self, name: str) -> str:
        return quote_identifier(name if self.policy is None else f"{MEAN_PREFIX}{name}")


RAW = Source(None, POLICY_STEPS[None])


def window(seconds: float) -> str:
    return f"time > now() - {int(seconds)}s"


# Grafana fills these in: the dashboard's time range and its step.
GRAFANA_WINDOW = "$timeFilter"
GRAFANA_STEP = "$__interval"


# --- conditions on the tags -------------------------------------------------------------------


def filesystem_condition(name: str) -> str:
    return f"{quote_identifier(schema.FS)} = {quote_string(name)}"


def servers_condition(hostnames: list[str]) -> str:
    if not hostnames:
        return "false"
    server = quote_identifier(schema.SERVER)
    return "(" + " OR ".join(f"{server} = {quote_string(h)}" for h in hostnames) + ")"


def target_condition(label: str) -> str:
    fs, target = schema.split_label(label)
    condition = f"{quote_identifier(schema.TARGET)} = {quote_string(target)}"
    if fs:
        condition = f"{filesystem_condition(fs)} AND {condition}"
    return condition


def _tags(names: tuple[str, ...]) -> str:
    return ", ".join(quote_identifier(name) for name in names)


# --- charts and Grafana panels ----------------------------------------------------------------

PER_TARGET = (schema.TARGET, schema.SERVER)
PER_SERVER = (schema.SERVER,)


def rate_statement(
    measurement: str,
    fields: dict[str, str],
    where: str,
    *,
    source: Source = RAW,
    inner_window: str,
    outer_window: str,
    step: str,
    per_series: tuple[str, ...] = PER_TARGET,
    by: tuple[str, ...] = (),
) -> str:
    """Per-second rates of counters, per series first and summed after, in time buckets.

    ``fields`` maps an output column to a counter field; ``by`` keeps one series per value of
    those tags. The inner window reaches a step further back so the first bucket has a rate.
    """
    quote = quote_identifier
    inner = ", ".join(
        f"non_negative_derivative(last({source.field(field)}), 1s) AS {quote(name)}"
        for name, field in fields.items()
    )
    outer = ", ".join(f"sum({quote(name)}) AS {quote(name)}" for name in fields)
    grouped = ", ".join((f"time({step})", *(quote(tag) for tag in by)))
    return (
        f"SELECT {outer} FROM (SELECT {inner} FROM {source.measurement(measurement)} "
        f"WHERE {where} AND {inner_window} "
        f"GROUP BY time({step}), {_tags(per_series)}) "
        f"WHERE {outer_window} GROUP BY {grouped} fill(none)"
    )


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


def grafana_rate_statement(
    measurement: str,
    fields: dict[str, str],
    where: str,
    per_series: tuple[str, ...] = PER_TARGET,
    by: tuple[str, ...] = (),
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


# --- health facts -----------------------------------------------------------------------------

# How far back a sensor's last round is looked for; older means "nothing for a long time".
LAST_SEEN_WINDOW_SECONDS = 3600


@dataclass(frozen=True)
class FactStatement:
    """One statement behind the health facts: the newest points of each series (``series``:
    its tags) within ``window`` seconds, or since a moment (``statement(since_ms)``), which is
    how the engine reads only what is new since its last round (``keep`` newest points kept).

    The big measurements (a target, a BMC sensor, an array component per series: tens of
    thousands of series on a 100-SSU rack) are read as one flat list in time order, the tags as
    columns (``flat``), and the newest point of each series is taken by the engine: InfluxDB 1.x
    answers ``GROUP BY <tags> ORDER BY time DESC LIMIT 1`` over thousands of series three to
    four times slower (a descending cursor per series).
    """

    fields: str
    measurement: str
    window: int
    series: tuple[str, ...]
    where: str = ""
    flat: bool = False
    keep: int = 1
    aggregate: bool = False  # ``fields`` is a selector such as last(x): one point per series

    def statement(self, since_ms: int | None = None) -> str:
        moment = (
            f"time > {since_ms}ms" if since_ms is not None else f"time > now() - {self.window}s"
        )
        where = f"{self.where} AND {moment}" if self.where else moment
        if self.flat:
            columns = ", ".join(self.series)
            return f"SELECT {columns}, {self.fields} FROM {self.measurement} WHERE {where}"
        grouped = f"GROUP BY {', '.join(self.series)}"
        if not self.aggregate:
            grouped += f" ORDER BY time DESC LIMIT {self.keep}"
        return f"SELECT {self.fields} FROM {self.measurement} WHERE {where} {grouped}"


ARRAY_SERIES = ("array", "component", "id", "server")
TARGET_SERIES = ("fs", "target", "server")


def fact_statements(silence_seconds: float) -> dict[str, FactStatement]:
    """The statements behind the facts, by name (the benchmark times each). The redundant paths
    a server reports (sensors.redundancy) keep a silent server's last report (the hour's window):
    it names what it lost before its partner fenced it."""
    short = int(max(60, 3 * silence_seconds))
    recent = int(max(20, silence_seconds))
    hour = LAST_SEEN_WINDOW_SECONDS
    capacity = ", ".join(schema.CAPACITY_FIELDS)
    server = ("server",)
    node = (
        f"{', '.join(schema.CPU_FIELDS)}, mem_total_kb, mem_available_kb, {schema.LUSTRE_HEALTHY}"
    )
    power = ", ".join(schema.BMC_POWER_FIELDS)
    return {
        "sensor": FactStatement("last(collect_seconds)", "sensor", hour, server, aggregate=True),
        "node": FactStatement(node, "node", short, server, flat=True, keep=2),
        "bmc_seen": FactStatement("last(ok)", "bmc", hour, server, aggregate=True),
        "bmc": FactStatement(
            ", ".join(schema.BMC_FIELDS), "bmc", short, ("server", "sensor", "type"), flat=True
        ),
        "ost": FactStatement(capacity, "ost", short, TARGET_SERIES, flat=True),
        "mdt": FactStatement(capacity, "mdt", short, TARGET_SERIES, flat=True),
        # Every round reports every drive, group and controller of an array: the controllers
        # say when each server last reported each array; of the volume groups only those not ok
        # are read, and drives only in arrays with such a group (``drive_faults``), by tag,
        # which the index answers quickly.
        "array_rounds": FactStatement(
            "state, ok", "array", short, ARRAY_SERIES, "component = 'controller'", flat=True
        ),
        "group_faults": FactStatement(
            "state, ok",
            "array",
            recent,
            ARRAY_SERIES,
            "component = 'volume_group' AND ok = 0",
            flat=True,
        ),
        "cluster": FactStatement(", ".join(schema.CLUSTER_FIELDS), "cluster", hour, server),
        "lnet_state": FactStatement(", ".join(schema.LNET_STATE_FIELDS), "lnet", hour, server),
        # Each server's summary point (no `device` tag); the maps themselves are read only
        # for servers whose newest summary has lost paths (``multipath_faults_statement``).
        "multipath": FactStatement(
            ", ".join(schema.MULTIPATH_SUMMARY_FIELDS), "multipath", hour, server, "device = ''"
        ),
        "bmc_power": FactStatement(power, "bmc_power", short, ("server", "polled_by")),
        # The newest poll the BMC did answer: one missed poll is not a BMC that is down.
        "bmc_power_ok": FactStatement(
            power, "bmc_power", short, ("server", "polled_by"), "answered = 1"
        ),
    }


def multipath_faults_statement(rounds: dict[str, int]) -> str:
    """The maps with a lost path of these servers, since the oldest of their newest rounds
    (``rounds``: server -> time in ms)."""
    which = " OR ".join(f"server = {quote_string(name)}" for name in sorted(rounds))
    return (
        f"SELECT {', '.join(schema.MULTIPATH_MAP_FIELDS)} FROM multipath WHERE paths_failed > 0 "
        f"AND ({which}) AND time >= {min(rounds.values())}ms "
        "GROUP BY server, device ORDER BY time DESC LIMIT 1"
    )


def drive_faults_statement(arrays: list[str], silence_seconds: float) -> str:
    """The drives not ok of these arrays, in their recent rounds."""
    which = " OR ".join(f"array = {quote_string(name)}" for name in sorted(arrays))
    return FactStatement(
        "state, ok",
        "array",
        int(max(20, silence_seconds)),
        ARRAY_SERIES,
        f"component = 'drive' AND ({which}) AND ok = 0",
        flat=True,
    ).statement()


# --- alert rules (portal.alerts) -------------------------------------------------------------

# A threshold rule reads the newest point of each series no older than this (three rounds).
ALERT_FRESH_SECONDS = 3 * POLICY_STEPS[None]
# A no-data rule knows the series that reported within this window.
ALERT_KNOWN_SECONDS = 3600


def _alert_columns(source: Source, field: str, percent_of: str, rate: bool) -> str:
    if rate:
        return f"non_negative_derivative(last({source.field(field)}), 1s) AS value"
    columns = f"last({source.field(field)}) AS value"
    if percent_of:
        columns += f", last({source.field(percent_of)}) AS whole"
    return columns


def alert_now_statement(
    measurement: schema.Measurement, field: str, percent_of: str = "", rate: bool = False
) -> str:
    """The newest value of ``field`` per series (its rate: per 10 s step, the last one wins;
    with ``percent_of``: that field too, as ``whole``)."""
    grouped = _tags(measurement.tags)
    if rate:
        grouped = f"time({RAW.step}s), {grouped}"
    return (
        f"SELECT {_alert_columns(RAW, field, percent_of, rate)} "
        f"FROM {RAW.measurement(measurement.name)} WHERE {window(ALERT_FRESH_SECONDS)} "
        f"GROUP BY {grouped}" + (" fill(none)" if rate else "")
    )


def alert_last_seen_statement(measurement: schema.Measurement, field: str) -> str:
    """When each series of the last hour last reported ``field``."""
    return (
        f"SELECT last({quote_identifier(field)}) AS value FROM {RAW.measurement(measurement.name)} "
        f"WHERE {window(ALERT_KNOWN_SECONDS)} GROUP BY {_tags(measurement.tags)}"
    )


def alert_history_statement(
    source: Source,
    measurement: schema.Measurement,
    field: str,
    seconds: int,
    percent_of: str = "",
    rate: bool = False,
) -> str:
    """One value per series and step over the last ``seconds`` (a rule's backtest); a no-data
    rule counts the points of each step instead (``fill(0)``: an empty step is a zero)."""
    return (
        f"SELECT {_alert_columns(source, field, percent_of, rate)} "
        f"FROM {source.measurement(measurement.name)} WHERE {window(seconds)} "
        f"GROUP BY time({source.step}s), {_tags(measurement.tags)} fill(none)"
    )


def alert_count_history_statement(
    source: Source, measurement: schema.Measurement, field: str, seconds: int
) -> str:
    return (
        f"SELECT count({source.field(field)}) AS value "
        f"FROM {source.measurement(measurement.name)} WHERE {window(seconds)} "
        f"GROUP BY time({source.step}s), {_tags(measurement.tags)} fill(0)"
    )


# --- Grafana panels (dashboards.views) --------------------------------------------------------
# Raw points over the dashboard's range ($timeFilter) in its step ($__interval); `$name` is a
# dashboard variable.


def grafana_match(tag: str, variable: str) -> str:
    """The tag matches the dashboard variable (all of its selected values)."""
    return f"{quote_identifier(tag)} =~ /^${variable}$/"


def grafana_tag_values(measurement: str, key: str, where: str = "") -> str:
    text = (
        f"SHOW TAG VALUES FROM {quote_identifier(measurement)} WITH KEY = {quote_identifier(key)}"
    )
    return f"{text} WHERE {where}" if where else text


def grafana_fill_by_target(where: str) -> str:
    return (
        'SELECT 100 * (last("kbytes_total") - last("kbytes_free")) / '
        '(last("kbytes_total") - last("kbytes_free") + last("kbytes_avail")) AS "fill" '
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
        'SELECT 100 * (last("kbytes_total") - last("kbytes_free")) / '
        '(last("kbytes_total") - last("kbytes_free") + last("kbytes_avail")) '
        f'AS "fill" FROM "ost" WHERE {where} AND {GRAFANA_WINDOW} '
        f"GROUP BY time({GRAFANA_STEP}) fill(none)"
    )


def grafana_total_fill(where: str) -> str:
    return (
        'SELECT 100 * sum("used") / (sum("used") + sum("avail")) AS "fill" FROM '
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
        'SELECT 100 * (1 - last("mem_available_kb") / last("mem_total_kb")) '
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


# --- analytics ----------------------------------------------------------------------------------

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
    schema.BRW.name: ("read_ios", "write_ios"),
}
ANALYTICS_BRW_SECTIONS = ("disk_io_size", "pages_per_bulk_rw")


def between(since: float, until: float) -> str:
    return f"time >= {int(since)}s AND time <= {int(until)}s"


def analytics_statements(source: Source, where: str, since: float, until: float) -> list[str]:
    """The points the analytics report is computed from, per series: ``ost`` and ``ost_job``
    as the first value of the window and the last of each step (counters telescope, so the
    window's sum is exact and each step's increment is there for the heat maps and for since
    when); ``brw`` histograms as the first and last value of the window only."""
    condition = f"{where} AND {between(since, until)}" if where else between(since, until)
    statements = []
    for measurement in (schema.OST, schema.OST_JOB, schema.BRW):
        fields = ANALYTICS_FIELDS[measurement.name]
        if measurement is schema.BRW:
            sections = " OR ".join(
                f"{quote_identifier(schema.SECTION)} = {quote_string(s)}"
                for s in ANALYTICS_BRW_SECTIONS
            )
            where_brw = f"{condition} AND ({sections})"
            for selector in ("first", "last"):
                statements.append(_selected(source, measurement, selector, fields, where_brw, ""))
            continue
        statements.append(_selected(source, measurement, "first", fields, condition, ""))
        statements.append(
            _selected(source, measurement, "last", fields, condition, f"time({source.step}s), ")
            + " fill(none)"
        )
    return statements


def _selected(
    source: Source,
    measurement: schema.Measurement,
    selector: str,
    fields: tuple[str, ...],
    where: str,
    grouped: str,
) -> str:
    columns = ", ".join(f"{selector}({source.field(f)}) AS {quote_identifier(f)}" for f in fields)
    return (
        f"SELECT {columns} FROM {source.measurement(measurement.name)} WHERE {where} "
        f"GROUP BY {grouped}{_tags(measurement.tags)}"
    )


def analytics_oldest_statement(source: Source, since: float, until: float) -> str:
    """The oldest OST statistics point in the window: where the data really starts (a young
    rack's is shorter than the window asked for)."""
    return (
        f"SELECT first({source.field('write_bytes')}) "
        f"FROM {source.measurement(schema.OST.name)} WHERE {between(since, until)}"
    )


# --- surveys ----------------------------------------------------------------------------------


def survey_traffic_statements(filesystem: str, seconds: int) -> list[str]:
    """Whether a filesystem is in use before a survey loads its servers: its OSTs' bytes/s per
    minute over the last ``seconds`` (summed over the series), and the exports each OST counts
    now (clients, plus the metadata targets' connections)."""
    where = filesystem_condition(filesystem)
    step = 60
    traffic = rate_statement(
        schema.OST.name,
        {"read": "read_bytes", "write": "write_bytes"},
        where,
        inner_window=window(seconds + step),
        outer_window=window(seconds),
        step=f"{step}s",
    )
    exports = (
        f"SELECT last({quote_identifier('num_exports')}) AS {quote_identifier('exports')} "
        f"FROM {quote_identifier(schema.OST.name)} WHERE {where} AND {window(seconds)} "
        f"GROUP BY {_tags(PER_TARGET)}"
    )
    return [traffic, exports]
