"""One collection round over every configured collector, and the sensor's own health point.

Each collector runs inside its own guard: a file that fails to parse is reported by the
collector and skipped, and even an unexpected error in one collector only costs that
collector's points for the round, never the others'.

The BMC, array and redundancy collectors wait on outside programs (ipmitool over the LAN,
SMcli: about a second each; corosync-cfgtool, multipath, lnetctl), so they run in threads of
their own, each into its own Round merged at the end,
while the Lustre files are read: a round lasts as long as its slowest part, not their sum.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from sensors.arrays import ArraySource, CommandArraySource, SMcliArraySource, collect_arrays
from sensors.bmc import collect_bmc
from sensors.config import SensorConfig
from sensors.jobstats import JobStatsReader
from sensors.layout import LustreTree
from sensors.lustre import collect_oss_services, collect_targets
from sensors.node import collect_lnet, collect_node
from sensors.redundancy import (
    collect_cluster,
    collect_lnet_state,
    collect_multipath,
    collect_partner_pdu,
    collect_partner_power,
)
from sensors.rounds import Round
from sensors.santricity import SantricityCollector


class Collector:
    def __init__(self, config: SensorConfig, array_source: ArraySource | None = None) -> None:
        self.config = config
        self.tree = LustreTree(config.root)
        self.jobs = JobStatsReader()
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outside")
        self.array_source = array_source
        timeout = min(config.array_timeout, max(1.0, 0.8 * config.interval))
        if array_source is None and config.array_smcli:
            self.array_source = SMcliArraySource(
                config.array_smcli, list(config.array_names), timeout
            )
        elif array_source is None and config.array_command:
            self.array_source = CommandArraySource(config.array_command, timeout)
        # The arrays' REST API (on the management server): one conversation per array.
        self.santricity = None
        if "santricity" in config.collectors and config.santricity_arrays:
            ceiling = max(1.0, 0.8 * config.interval)
            self.santricity = SantricityCollector(config, min(config.santricity_timeout, ceiling))

    def collect(self, timestamp_ms: int) -> Round:
        """Run every collector once; all points carry `timestamp_ms`."""
        started = time.perf_counter()
        rnd = Round(timestamp_ms, self.config.static_tags())
        wanted = self.config.collectors
        found = {"ost": 0, "mdt": 0}
        self.jobs.new_round()
        outside = self._start_outside(rnd)
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
        for future, part in outside:
            future.result()
            rnd.lines.extend(part.lines)
            rnd.errors += part.errors
        rnd.seconds = time.perf_counter() - started
        return rnd

    def _start_outside(self, rnd: Round) -> list:
        """Start the BMC and array collectors in threads, each into a Round of its own."""
        wanted = self.config.collectors
        # A hung BMC or array must not hold the round past its interval.
        ceiling = max(1.0, 0.8 * self.config.interval)
        jobs = []
        if "bmc" in wanted and self.config.bmc_command:
            part = Round(rnd.timestamp, rnd.tags)
            args = (part, self.config.bmc_command, min(self.config.bmc_timeout, ceiling))
            jobs.append((part, "bmc", collect_bmc, args))
        if "array" in wanted and self.array_source is not None:
            part = Round(rnd.timestamp, rnd.tags)
            where = f"array command {self.config.array_smcli or self.config.array_command!r}"
            jobs.append((part, "array", collect_arrays, (part, self.array_source, where)))
        if self.santricity is not None:
            part = Round(rnd.timestamp, rnd.tags)
            jobs.append((part, "santricity", self.santricity.collect, (part,)))
        timeout = min(self.config.command_timeout, ceiling)
        config = self.config
        for name, active, function, args in (
            ("cluster", config.cluster_command, collect_cluster, (config.cluster_command,)),
            (
                "multipath",
                config.multipath_command,
                collect_multipath,
                (config.multipath_command,),
            ),
            (
                "lnet",
                config.lnetctl_command,
                collect_lnet_state,
                (config.lnetctl_command, config.lnet_peers),
            ),
            (
                "partner_bmc",
                config.partner_bmc_command,
                collect_partner_power,
                (config.partner_host, config.partner_bmc_command),
            ),
            (
                "partner_pdu",
                config.partner_pdu_command,
                collect_partner_pdu,
                (config.partner_host, config.partner_pdu_command),
            ),
        ):
            if name in wanted and active:
                part = Round(rnd.timestamp, rnd.tags)
                jobs.append((part, name, function, (part, *args, timeout)))
        started = []
        for part, name, function, args in jobs:
            future = self._pool.submit(self._guard, part, name, function, *args)
            started.append((future, part))
        return started

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
