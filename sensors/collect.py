"""One collection round over every configured collector, and the sensor's own health point.

Each collector runs inside its own guard: a file that fails to parse is reported by the
collector and skipped, and even an unexpected error in one collector only costs that
collector's points for the round, never the others'.
"""

from __future__ import annotations

import time

from sensors.arrays import ArraySource, CommandArraySource, collect_arrays
from sensors.bmc import collect_bmc
from sensors.config import SensorConfig
from sensors.jobstats import JobStatsReader
from sensors.layout import LustreTree
from sensors.lustre import collect_oss_services, collect_targets
from sensors.node import collect_lnet, collect_node
from sensors.rounds import Round


class Collector:
    def __init__(self, config: SensorConfig, array_source: ArraySource | None = None) -> None:
        self.config = config
        self.tree = LustreTree(config.root)
        self.jobs = JobStatsReader()
        self.array_source = array_source
        if array_source is None and config.array_command:
            self.array_source = CommandArraySource(config.array_command, config.array_timeout)

    def collect(self, timestamp_ms: int) -> Round:
        """Run every collector once; all points carry `timestamp_ms`."""
        started = time.perf_counter()
        rnd = Round(timestamp_ms, self.config.static_tags())
        wanted = self.config.collectors
        found = {"ost": 0, "mdt": 0}
        self.jobs.new_round()
        for kind in ("ost", "mdt"):
            if kind in wanted:
                found[kind] = (
                    self._guard(rnd, kind, collect_targets, self.tree, rnd, kind, self.jobs) or 0
                )
        if "oss_service" in wanted:
            self._guard(rnd, "oss_service", collect_oss_services, self.tree, rnd)
        if "node" in wanted:
            role = self.config.role or _role(found)
            self._guard(rnd, "node", collect_node, self.tree, rnd, role)
        if "lnet" in wanted:
            self._guard(rnd, "lnet", collect_lnet, self.tree, rnd)
        if "bmc" in wanted and self.config.bmc_command:
            self._guard(
                rnd, "bmc", collect_bmc, rnd, self.config.bmc_command, self.config.bmc_timeout
            )
        if "array" in wanted and self.array_source is not None:
            where = f"array command {self.config.array_command!r}"
            self._guard(rnd, "array", collect_arrays, rnd, self.array_source, where)
        rnd.seconds = time.perf_counter() - started
        return rnd

    @staticmethod
    def _guard(rnd: Round, name: str, function, *args):
        try:
            return function(*args)
        except Exception as error:  # a bug in one collector must not stop the others
            rnd.problem(f"collector {name}", error)
            return None


def _role(found: dict[str, int]) -> str:
    if found["mdt"] and not found["ost"]:
        return "mds"
    if found["ost"]:
        return "oss"
    return "server"


def sensor_fields(
    rnd: Round, spooled_points: int, dropped_points: int, rejected_points: int
) -> dict:
    """The `sensor` point: the agent's own health for this round."""
    return {
        "spooled_points": spooled_points,
        "dropped_points": dropped_points,
        "rejected_points": rejected_points,
        "parse_errors": rnd.errors,
        "collect_seconds": round(rnd.seconds, 6),
        "points": len(rnd.lines),
    }
