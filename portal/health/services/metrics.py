"""The newest points of the sensors that the health rules read (DESIGN.md §6), from InfluxDB.

One request per round asks for every statement of ``portal.metric_queries`` (``metric_statements``
and ``signal_statements``); the big measurements (a target, a BMC sensor, an array component per
series: tens of thousands of series on a 100-SSU rack) come back as one flat list in time order,
of which ``newest`` keeps the last point of each series.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from portal import influx
from portal import metric_queries as queries
from sensors import schema


def newest(points: list[dict], tags: tuple[str, ...]) -> list[dict]:
    """The newest point of each series (``tags``) of a flat answer in time order; a tag a series
    lacks reads "" as in a ``GROUP BY`` answer."""
    last: dict[tuple, dict] = {}
    for point in points:
        for tag in tags:
            if point[tag] is None:
                point[tag] = ""
        last[tuple(point[tag] for tag in tags)] = point
    return list(last.values())


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
    # The redundant paths (sensors.redundancy), newest report of each server.
    cluster: dict[str, dict] = field(default_factory=dict)
    lnet_state: dict[str, dict] = field(default_factory=dict)
    multipath_faults: dict[str, list[dict]] = field(default_factory=dict)  # server -> devices
    power: dict[str, dict] = field(default_factory=dict)  # polled server -> newest answer
    power_ok: dict[str, dict] = field(default_factory=dict)  # polled server -> newest "answered"


def read_signals(answers: dict[str, list[dict]], metrics: Metrics) -> None:
    """The answers of ``signal_statements`` into ``metrics``."""
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
    for name, found in (("bmc_power", metrics.power), ("bmc_power_ok", metrics.power_ok)):
        for point in answers[name]:
            newest = found.get(point["server"])
            if newest is None or point["time"] > newest["time"]:
                found[point["server"]] = point


def read_metrics(silence_seconds: float) -> Metrics:
    """One request to InfluxDB for everything the rules need; raises ``influx.InfluxError``."""
    statements = {
        **queries.metric_statements(silence_seconds),
        **queries.signal_statements(silence_seconds),
    }
    results = influx.query_tagged(list(statements.values()), epoch="ms")
    answers = dict(zip(statements, results, strict=True))
    for name, tags in queries.NEWEST_BY.items():
        if name in answers:
            answers[name] = newest(answers[name], tags)
    metrics = Metrics()
    for point in answers["sensor"]:
        metrics.sensor_seen[point["server"]] = point["time"] / 1000
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
    # Both servers of a pair may report its arrays; their rounds share the tick's time. A
    # fault counts while it is in the array's newest round, whoever reported it.
    rounds: dict[str, int] = {}
    for point in answers["array_rounds"]:
        array = point.get("array", "")
        rounds[array] = max(rounds.get(array, 0), point["time"])
        metrics.array_seen[array] = rounds[array] / 1000
    faults = answers["group_faults"]
    degraded = sorted({p.get("array", "") for p in faults if p["time"] >= _round(rounds, p)})
    if degraded:
        (drives,) = influx.query_tagged(
            [queries.drive_faults_statement(degraded, silence_seconds)], epoch="ms"
        )
        faults = faults + newest(drives, queries.NEWEST_BY["drive_faults"])
    for point in answers["array_rounds"] + faults:
        if point["time"] < _round(rounds, point):
            continue  # not in the array's newest round: fixed since
        key = (point.get("component", ""), point.get("id", ""))
        components = metrics.arrays.setdefault(point.get("array", ""), {})
        if key not in components or components[key]["time"] < point["time"]:
            components[key] = point
    return metrics


def _round(rounds: dict[str, int], point: dict) -> int:
    """Time of the newest round that reported the point's array."""
    return rounds.get(point.get("array", ""), 0)
