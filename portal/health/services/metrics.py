"""The newest points of the sensors that the health rules read (DESIGN.md §6), from InfluxDB.

A round asks for every statement of ``metrics.influxql.facts.fact_statements``, in a few
requests side by side.
The newest points of each series are kept between rounds (``KeptPoints``), so a round asks only
for what came since the last one: a few seconds of points instead of each statement's whole
window (up to an hour), which on a 100-SSU rack is most of a round's cost. The targets' points
are asked only since the servers' last whole round (``KeptPoints.rounds_since``): that round once
more and the new one, two rounds of 2,400 OSTs rather than the three a fixed margin held.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.conf import settings

from metrics.influxql import facts as queries
from portal import influxdb as influx
from sensors import schema

# Points reach InfluxDB a little after the moment they carry (a round is written when it is
# complete, a busy server's seconds late, a server's clock a little behind): each round reads
# again this far behind the last, at least as far as a sensor may lag before it counts as silent.
MARGIN_SECONDS = 15.0


def newest(points: list[dict], tags: tuple[str, ...]) -> list[dict]:
    """The newest point of each series (``tags``) of a flat answer in time order; a tag a series
    lacks reads "" as in a ``GROUP BY`` answer."""
    last: dict[tuple, dict] = {}
    for point in points:
        last[_series(point, tags)] = point
    return list(last.values())


def _series(point: dict, tags: tuple[str, ...]) -> tuple:
    for tag in tags:
        if point.get(tag) is None:
            point[tag] = ""
    return tuple(point[tag] for tag in tags)


class KeptPoints:
    """The newest points of every series of every statement, kept between the rounds of this
    process. Each statement's window still bounds what counts: a point older than the window is
    dropped, as the statement over its whole window would not have found it. A new database or
    other windows start over."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget everything: the points and the intervals in effect."""
        self.forget()
        # The longest interval in effect on the rack of each measurement that comes on one
        # of its own, from the last round (``Metrics.longest_intervals``): the statements'
        # windows hold three of its reports.
        self.intervals: dict[str, float] = queries.default_intervals()

    def forget(self) -> None:
        """Forget the points (other windows, another database, a failed read)."""
        self.identity: tuple | None = None
        self.read_at: float | None = None
        self.series: dict[str, dict[tuple, list[dict]]] = {}
        self.servers: set[str] = set()  # the servers of the `sensor` points the last round knew

    def statements(
        self,
        statements: dict[str, queries.FactStatement],
        now: float,
        identity: tuple,
        margin: float = MARGIN_SECONDS,
        after_rounds: tuple[str, ...] = (),
    ) -> dict[str, str]:
        """Each statement's text for this round: since the last read (less the margin), or over
        its whole window the first time; those named in ``after_rounds`` (asked after the
        `sensor` statement in one request) perhaps later still (``rounds_since``)."""
        if identity != self.identity:
            self.forget()
            self.identity = identity
        rounds = self.last_rounds()
        texts = {}
        for name, statement in statements.items():
            since = None
            if self.read_at is not None and name in self.series:
                start = max(now - statement.window, self.read_at - margin) * 1000
                if name in after_rounds and rounds is not None:
                    start = max(start, self.rounds_since(name, statement, rounds))
                since = int(start)
            texts[name] = statement.statement(since)
        self.read_at = now
        return texts

    def last_rounds(self) -> dict[str, int] | None:
        """Each server's newest `sensor` point (ms) as the last round read it, or None while a
        server that round heard first is new: nothing is known of what it sent before."""
        rounds = {key[0]: found[0]["time"] for key, found in self.series.get("sensor", {}).items()}
        known, self.servers = self.servers, set(rounds)
        return None if set(rounds) - known else rounds

    def rounds_since(
        self, name: str, statement: queries.FactStatement, rounds: dict[str, int]
    ) -> float:
        """The moment (ms) after which a server's round statement may have points not read yet:
        just before the oldest of every server's last whole round. A sensor sends a round's
        points in order, its `sensor` point last (sensors.sender, oldest batch first); the last
        round read the `sensor` points first and then, in the same request, this statement, so
        every point a server stamped before its newest `sensor` point was read then or before.
        Those of that very round are read once more: InfluxDB shows the points of one write
        one by one, the `sensor` point perhaps before a target's. Every server counts, not only
        those the statement has points of: one whose targets come back (a failover, a restart)
        may send them late. A server of the statement without a `sensor` point keeps the margin
        (-inf: no bound here); none is later than the last read (a clock set back)."""
        at = statement.series.index("server")
        if not rounds or not {key[at] for key in self.series[name]} <= rounds.keys():
            return float("-inf")
        return min(min(rounds.values()) - 1, (self.read_at or 0) * 1000)

    def merge(
        self, name: str, statement: queries.FactStatement, points: list[dict], now: float
    ) -> list[dict]:
        """The kept points with the round's new ones: the newest ``keep`` of each series, newest
        first, within the statement's window."""
        kept = self.series.setdefault(name, {})
        for point in points:
            kept.setdefault(_series(point, statement.series), []).append(point)
        oldest = (now - statement.window) * 1000
        answer = []
        for key in list(kept):
            found = kept[key]
            if len(found) > 1:
                by_time = {point["time"]: point for point in found}  # a point read twice once
                found = sorted(by_time.values(), key=lambda point: point["time"], reverse=True)
                found = found[: statement.keep]
            found = [point for point in found if point["time"] > oldest]
            if found:
                kept[key] = found
                answer.extend(found)
            else:
                del kept[key]
        return answer


KEPT = KeptPoints()
# The statements read in a request of their own (the most series on a big rack), side by side
# with one request for all the others. The servers' `sensor` points and their targets go in one
# request, the `sensor` points first (see ``whole_rounds``; and ``KeptPoints.rounds_since``:
# InfluxDB answers a request's statements in order). The arrays' volume groups not ok are read
# after their rounds, and only of the arrays whose controllers count one or do not say (a sensor
# from before the count): a round's controllers are written after its groups (sensors.arrays),
# so a round read has its faults in.
SEPARATE = (("sensor", "ost", "mdt"), ("array_rounds",))
# The statements of the points a sensor collects in its round, sent before its `sensor` point.
# Not the arrays': an outside program's run that ends in the next round is sent with that one,
# under the time of the round it started in, after that round's `sensor` point (sensors.README).
AFTER_ROUNDS = ("ost", "mdt")


@dataclass
class Metrics:
    """The newest points of the sensors, by object."""

    sensor_seen: dict[str, float] = field(default_factory=dict)  # server -> seconds
    node: dict[str, list[dict]] = field(default_factory=dict)  # server -> newest first
    bmc_seen: dict[str, float] = field(default_factory=dict)
    bmc: dict[str, list[dict]] = field(default_factory=dict)
    targets: dict[str, list[dict]] = field(default_factory=dict)  # label -> one per server
    target_round: dict[str, float] = field(default_factory=dict)  # server -> newest target time
    arrays: dict[str, dict[tuple[str, str], dict]] = field(default_factory=dict)
    array_seen: dict[str, float] = field(default_factory=dict)
    # array -> controller -> its two newest `array_management` points (the REST collector's),
    # newest first.
    management: dict[str, dict[str, list[dict]]] = field(default_factory=dict)
    # The redundant paths (sensors.redundancy), newest report of each server.
    cluster: dict[str, dict] = field(default_factory=dict)
    lnet_state: dict[str, dict] = field(default_factory=dict)
    multipath_faults: dict[str, list[dict]] = field(default_factory=dict)  # server -> devices
    power: dict[str, dict] = field(default_factory=dict)  # polled server -> newest answer
    power_ok: dict[str, dict] = field(default_factory=dict)  # polled server -> newest "answered"
    pdu: dict[str, dict] = field(default_factory=dict)  # polled server -> its outlet's newest
    pdu_ok: dict[str, dict] = field(default_factory=dict)
    # The server that reported each array's newest round.
    array_reporter: dict[str, str] = field(default_factory=dict)
    # server -> collector -> seconds between its runs, as its newest `sensor` point says.
    intervals: dict[str, dict[str, float]] = field(default_factory=dict)
    # server -> its newest `sensor` point's schedule fields (`santricity_late`, ...).
    schedules: dict[str, dict] = field(default_factory=dict)

    def interval(self, server: str | None, measurement: str) -> float | None:
        """Seconds between the server's points of a measurement that comes on an interval of
        its own: its collector's interval as the server's sensor says, else the default."""
        own = self.intervals.get(server or "", {})
        for collector in schema.MEASUREMENT_COLLECTORS.get(measurement, ()):
            if own.get(collector):
                return own[collector]
        return schema.default_interval(measurement)

    def longest_intervals(self) -> dict[str, float]:
        """The longest interval in effect on the rack of each such measurement."""
        longest = queries.default_intervals() if not self.intervals else {}
        for measurement in schema.MEASUREMENT_COLLECTORS:
            for server in self.intervals or ("",):
                seconds = self.interval(server, measurement)
                if seconds and seconds > longest.get(measurement, 0):
                    longest[measurement] = seconds
        return longest


def read_signals(answers: dict[str, list[dict]], metrics: Metrics) -> None:
    """The answers of the redundant paths' statements (``fact_statements``) into ``metrics``."""
    for point in answers["cluster"]:
        metrics.cluster[point["server"]] = point
    for point in answers["lnet_state"]:
        metrics.lnet_state[point["server"]] = point
    rounds = {
        point["server"]: point["time"]
        for point in answers["multipath"]
        if point.get("maps_degraded") or point.get("maps_failed")
    }
    if rounds:
        (faults,) = influx.query_tagged([queries.multipath_faults_statement(rounds)], epoch="ms")
        for point in faults:
            server = point.get("server", "")
            # Only the maps of the server's newest round: a repaired path is not reported.
            if point["time"] >= rounds.get(server, 0):
                metrics.multipath_faults.setdefault(server, []).append(point)
    for name, found in (
        ("bmc_power", metrics.power),
        ("bmc_power_ok", metrics.power_ok),
        ("pdu_power", metrics.pdu),
        ("pdu_power_ok", metrics.pdu_ok),
    ):
        for point in answers.get(name, ()):
            newest = found.get(point["server"])
            if newest is None or point["time"] > newest["time"]:
                found[point["server"]] = point


def read_metrics(silence_seconds: float, kept: KeptPoints | None = None) -> Metrics:
    """One request to InfluxDB for everything the rules need; raises ``influx.InfluxError``
    (and then keeps nothing of the round)."""
    kept = KEPT if kept is None else kept
    statements = queries.fact_statements(silence_seconds, kept.intervals)
    now = time.time()
    identity = (
        settings.INFLUXDB_URL,
        settings.INFLUXDB_DATABASE,
        silence_seconds,
        tuple(sorted(kept.intervals.items())),
    )
    margin = max(MARGIN_SECONDS, silence_seconds)
    texts = kept.statements(statements, now, identity, margin, AFTER_ROUNDS)
    # The statements that read thousands of series in requests of their own (``SEPARATE``),
    # side by side with one request for all the others.
    batches = [batch for names in SEPARATE if (batch := [n for n in names if n in texts])]
    batches.append([name for name in texts if not any(name in names for names in SEPARATE)])
    try:
        results = influx.query_tagged_at_once([[texts[n] for n in batch] for batch in batches])
        answers = {
            name: kept.merge(name, statements[name], points, now)
            for batch, answered in zip(batches, results, strict=True)
            for name, points in zip(batch, answered, strict=True)
        }
    except BaseException:
        kept.forget()  # nothing half-kept: the next round reads the whole windows again
        raise
    metrics = Metrics()
    for point in answers["sensor"]:
        metrics.sensor_seen[point["server"]] = point["time"] / 1000
    for point in answers["intervals"]:
        metrics.intervals[point["server"]] = {
            name: point[schema.interval_field(name)]
            for name in schema.SCHEDULED_COLLECTORS
            if point.get(schema.interval_field(name))
        }
        metrics.schedules[point["server"]] = point
    kept.intervals = metrics.longest_intervals()
    read_signals(answers, metrics)
    for point in answers["node"]:
        metrics.node.setdefault(point["server"], []).append(point)
    for point in answers["bmc_seen"]:
        metrics.bmc_seen[point["server"]] = point["time"] / 1000
    for point in answers["bmc"]:
        metrics.bmc.setdefault(point["server"], []).append(point)
    for point in answers["ost"] + answers["mdt"]:
        if not point.get("target") or not point.get("server"):
            continue
        metrics.targets.setdefault(schema.point_label(point), []).append(point)
        seconds = point["time"] / 1000
        if seconds > metrics.target_round.get(point["server"], 0):
            metrics.target_round[point["server"]] = seconds
    whole_rounds(metrics)
    # Both servers of a pair may report its arrays; their rounds share the tick's time. A
    # fault counts while it is in the array's newest round, whoever reported it.
    rounds: dict[str, int] = {}
    for point in answers["array_rounds"]:
        array = point.get("array", "")
        if point["time"] >= rounds.get(array, 0):
            rounds[array] = point["time"]
            metrics.array_reporter[array] = point.get("server", "")
        metrics.array_seen[array] = rounds[array] / 1000
    for point in answers.get("array_management", ()):
        controllers = metrics.management.setdefault(point.get("array", ""), {})
        controllers.setdefault(point.get("controller", ""), []).append(point)  # newest first
    # The groups not ok and their drives, of the arrays whose newest round counts such a group
    # (or does not say: a controller point of a sensor from before the count).
    degraded = sorted(
        {
            p.get("array", "")
            for p in answers["array_rounds"]
            if p["time"] >= _round(rounds, p) and p.get(schema.GROUPS_NOT_OK) != 0
        }
    )
    faults: list[dict] = []
    if degraded:
        groups, drives = influx.query_tagged(
            queries.array_faults_statements(degraded, statements["array_rounds"].window),
            epoch="ms",
        )
        faults = newest(groups, queries.ARRAY_SERIES) + newest(drives, queries.ARRAY_SERIES)
    for point in answers["array_rounds"] + faults:
        if point["time"] < _round(rounds, point):
            continue  # not in the array's newest round: fixed since
        key = (point.get("component", ""), point.get("id", ""))
        components = metrics.arrays.setdefault(point.get("array", ""), {})
        if key not in components or components[key]["time"] < point["time"]:
            components[key] = point
    return metrics


def whole_rounds(metrics: Metrics) -> None:
    """A server's targets' round counts once it has landed whole. A sensor sends a round in
    batches (sensors.sender: 5,000 points each; a server's job stats fill several), one after
    the other, its `sensor` point the last line of the last. Read between two batches, the
    targets of the later ones would have only the last round's points, older than the newest
    round of the server's targets, and look unmounted for one evaluation: a CRITICAL mail for
    every OST of an OSS, then its "resolved". So a server's round is its newest `sensor`
    point's, when older: a target is unmounted there once a whole round has left it out."""
    for server, seconds in metrics.target_round.items():
        whole = metrics.sensor_seen.get(server)
        if whole is not None and whole < seconds:
            metrics.target_round[server] = whole


def _round(rounds: dict[str, int], point: dict) -> int:
    """Time of the newest round that reported the point's array."""
    return rounds.get(point.get("array", ""), 0)
