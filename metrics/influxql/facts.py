"""The statements behind the health facts (``portal.health.services.metrics``): the newest points
of the sensors that the health rules read (DESIGN.md §6)."""

from __future__ import annotations

from dataclasses import dataclass

from metrics.influxql.common import quote_string
from sensors import schema

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


def default_intervals() -> dict[str, float]:
    """Seconds between the points of each measurement that comes on an interval of its own, by
    the sensors' defaults."""
    return {name: schema.default_interval(name) for name in schema.MEASUREMENT_COLLECTORS}


def fact_statements(
    silence_seconds: float, intervals: dict[str, float] | None = None
) -> dict[str, FactStatement]:
    """The statements behind the facts, by name (the benchmark times each). The redundant paths
    a server reports (sensors.redundancy) keep a silent server's last report (the hour's window):
    it names what it lost before its partner fenced it. ``intervals``: the longest seconds
    between the points of a measurement in effect on the rack (``default_intervals``): a
    window holds at least three of its reports, so a BMC read once a minute is not lost from
    view between two readings."""
    intervals = {**default_intervals(), **(intervals or {})}
    short = int(max(60, 3 * silence_seconds))

    def window(measurement: str, least: int) -> int:
        return int(max(least, 3 * intervals[measurement]))

    # Each collector's interval, with its last run's seconds and lateness (`santricity_late`).
    collectors = ", ".join(schema.SCHEDULE_FIELDS)
    hour = LAST_SEEN_WINDOW_SECONDS
    capacity = ", ".join(schema.CAPACITY_FIELDS)
    server = ("server",)
    node = (
        f"{', '.join(schema.CPU_FIELDS)}, mem_total_kb, mem_available_kb, {schema.LUSTRE_HEALTHY}"
    )
    power = ", ".join(schema.BMC_POWER_FIELDS)
    pdu = ", ".join(schema.PDU_POWER_FIELDS)
    polls, outlets = window("bmc_power", short), window("pdu_power", short)
    return {
        "sensor": FactStatement("last(collect_seconds)", "sensor", hour, server, aggregate=True),
        # Each server's collectors' intervals in effect and how late they run, from its newest
        # `sensor` point (a collector whose rounds are its long interval, the array
        # collector's, writes one an interval: the window holds three of the longest).
        "intervals": FactStatement(
            collectors, "sensor", int(max(short, 3 * max(intervals.values()))), server, flat=True
        ),
        "node": FactStatement(node, "node", short, server, flat=True, keep=2),
        "bmc_seen": FactStatement("last(ok)", "bmc", hour, server, aggregate=True),
        "bmc": FactStatement(
            ", ".join(schema.BMC_FIELDS),
            "bmc",
            window("bmc", short),
            ("server", "sensor", "type"),
            flat=True,
        ),
        "ost": FactStatement(capacity, "ost", short, TARGET_SERIES, flat=True),
        "mdt": FactStatement(capacity, "mdt", short, TARGET_SERIES, flat=True),
        # Every round reports every drive, group and controller of an array: the controllers
        # say when each server last reported each array, and how many of its volume groups are
        # not ok; the groups not ok and their drives are read only of arrays that have such a
        # one (``array_faults_statements``), by tag, which the index answers quickly.
        "array_rounds": FactStatement(
            f"state, ok, {schema.GROUPS_NOT_OK}",
            "array",
            window("array", short),
            ARRAY_SERIES,
            "component = 'controller'",
            flat=True,
        ),
        # Whether each controller answered the array collector on its management address (the
        # REST API; a controller not asked this round, A having answered, has older points),
        # its two newest: one unanswered round is not a dead management port.
        "array_management": FactStatement(
            "answered, refused",
            "array_management",
            window("array", short),
            ("array", "controller"),
            flat=True,
            keep=2,
        ),
        "cluster": FactStatement(", ".join(schema.CLUSTER_FIELDS), "cluster", hour, server),
        "lnet_state": FactStatement(", ".join(schema.LNET_STATE_FIELDS), "lnet", hour, server),
        # Each server's summary point (no `device` tag); the maps themselves are read only
        # for servers whose newest summary has lost paths (``multipath_faults_statement``).
        "multipath": FactStatement(
            ", ".join(schema.MULTIPATH_SUMMARY_FIELDS), "multipath", hour, server, "device = ''"
        ),
        "bmc_power": FactStatement(power, "bmc_power", polls, ("server", "polled_by")),
        # The newest poll the BMC did answer: one missed poll is not a BMC that is down.
        "bmc_power_ok": FactStatement(
            power, "bmc_power", polls, ("server", "polled_by"), "answered = 1"
        ),
        # The second fencing level, the PDU outlet, read the same way.
        "pdu_power": FactStatement(pdu, "pdu_power", outlets, ("server", "polled_by")),
        "pdu_power_ok": FactStatement(
            pdu, "pdu_power", outlets, ("server", "polled_by"), "answered = 1"
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


def array_faults_statements(arrays: list[str], window_seconds: int) -> list[str]:
    """The volume groups not ok of these arrays, with their long-running operation (a
    reconstruction, its percent), and their drives not ok, in their rounds of the window (that
    of ``array_rounds``)."""
    which = " OR ".join(f"array = {quote_string(name)}" for name in sorted(arrays))
    return [
        FactStatement(
            fields,
            "array",
            window_seconds,
            ARRAY_SERIES,
            f"component = {quote_string(component)} AND ({which}) AND ok = 0",
            flat=True,
        ).statement()
        for component, fields in (
            ("volume_group", "state, ok, operation, progress"),
            ("drive", "state, ok"),
        )
    ]
