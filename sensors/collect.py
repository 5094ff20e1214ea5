"""One collection round over every configured collector, and the sensor's own health point.

Each collector runs inside its own guard: a file that fails to parse is reported by the
collector and skipped, and even an unexpected error in one collector only costs that
collector's points for the round, never the others'.

The Lustre files, the node, the LNet counters and the kernel log are read every round. The
collectors that wait on outside programs (ipmitool, SMcli, corosync-cfgtool, multipath, lnetctl,
the partner's BMC and PDU) each run on an interval of their own (`[bmc] interval = 60`,
sensors.config) in threads of their own, each into its own Round stamped with the tick it
started at. A round never waits on a slow one: it takes what finished by its deadline, and a run
still going is not started again (no pile-up); its points go with the send of the round in which
it finishes, under the time of the round that started it, however late: they are readings of
that moment, the runs of one collector never overlap (a late result never overwrites a newer
one), and dropping them would leave a gap of a whole interval (a BMC that took 12 s still fills
its minute). What stops a hung program is each command's timeout, never longer than the
collector's interval.
Each outside collector's duration, lateness and interval go into the `sensor` point.

The two collectors that read many files (the owners' accounting and limits, `usage`, a line
per owner and target; the per-client stats, `exports`, a file per client and target) have an
interval of their own too, but run within the round when it comes round: there is no program
to wait on. Their interval goes into the `sensor` point.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from sensors.arrays import ArraySource, CommandArraySource, SMcliArraySource, collect_arrays
from sensors.bmc import collect_bmc
from sensors.config import FILE_INTERVALS, SensorConfig
from sensors.jobstats import JobStatsReader
from sensors.kmsg import KernelLog
from sensors.layout import LustreTree
from sensors.lustre import ExportsReader, collect_oss_services, collect_targets
from sensors.node import collect_lnet, collect_node
from sensors.quota import collect_usage
from sensors.redundancy import (
    collect_cluster,
    collect_lnet_state,
    collect_multipath,
    collect_partner_pdu,
    collect_partner_power,
)
from sensors.rounds import Round, report_problem
from sensors.santricity import SantricityCollector

# Share of the base interval a round waits for the outside collectors it started.
ROUND_SHARE = 0.8


@dataclass
class Outside:
    """One outside collector's schedule: its run in progress and its last finished one."""

    name: str
    run: Callable[[Round], None]
    interval: float
    timeout: float
    due: float = 0.0  # the tick (s) its next run is due at
    future: Future | None = None
    part: Round | None = None  # the points of the run in progress
    seconds: float | None = None  # how long its last finished run took


class Collector:
    def __init__(
        self,
        config: SensorConfig,
        array_source: ArraySource | None = None,
        state_dir: str | None = None,
    ) -> None:
        """`state_dir`: where the kernel log's last sequence is kept across restarts (the
        service's spool directory); None keeps it in memory only (`collect`)."""
        self.config = config
        self.tree = LustreTree(config.root)
        self.jobs = JobStatsReader()
        self.exports = ExportsReader()
        self.kernel_log = KernelLog(config.root, state_dir, config.kmsg_max_lines)
        # The tick (s) each file collector of its own interval is next due at.
        self.files_due = {name: 0.0 for name in FILE_INTERVALS if name in config.collectors}
        self.array_source = array_source
        timeout = config.timeout_of("array")
        if array_source is None and config.array_smcli:
            self.array_source = SMcliArraySource(
                config.array_smcli, list(config.array_names), timeout
            )
        elif array_source is None and config.array_command:
            self.array_source = CommandArraySource(config.array_command, timeout)
        # The arrays' REST API (on the management server): one conversation per array.
        self.santricity = None
        if "santricity" in config.collectors and config.santricity_arrays:
            self.santricity = SantricityCollector(config, config.timeout_of("santricity"))
        self.outside = {
            name: Outside(name, run, float(config.interval_of(name)), config.timeout_of(name))
            for name, run in self._outside_collectors().items()
            if name in config.collectors
        }
        # At most four outside programs at once per server, as before the intervals: a run
        # waiting for a thread counts as running (not started again, its lateness reported).
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outside")

    def _outside_collectors(self) -> dict[str, Callable[[Round], None]]:
        """The configured outside collectors: each one's run into a Round of its own."""
        config = self.config
        timeout = config.timeout_of
        found: dict[str, Callable[[Round], None] | None] = {}
        if config.bmc_command:
            found["bmc"] = lambda part: collect_bmc(part, config.bmc_command, timeout("bmc"))
        if self.array_source is not None:
            where = f"array command {config.array_smcli or config.array_command!r}"
            found["array"] = lambda part: collect_arrays(part, self.array_source, where)
        if self.santricity is not None:
            found["santricity"] = self.santricity.collect
        if config.cluster_command:
            found["cluster"] = lambda part: collect_cluster(
                part, config.cluster_command, timeout("cluster")
            )
        if config.multipath_command:
            found["multipath"] = lambda part: collect_multipath(
                part, config.multipath_command, timeout("multipath")
            )
        if config.lnetctl_command:
            found["lnet"] = lambda part: collect_lnet_state(
                part, config.lnetctl_command, config.lnet_peers, timeout("lnet")
            )
        if config.partner_bmc_command:
            found["partner_bmc"] = lambda part: collect_partner_power(
                part, config.partner_host, config.partner_bmc_command, timeout("partner_bmc")
            )
        if config.partner_pdu_command:
            found["partner_pdu"] = lambda part: collect_partner_pdu(
                part, config.partner_host, config.partner_pdu_command, timeout("partner_pdu")
            )
        return {name: run for name, run in found.items() if run is not None}

    def collect(self, timestamp_ms: int) -> Round:
        """Run the collectors due at this tick; all points carry `timestamp_ms`, but those of
        an outside run that finishes in a later round, which carry the tick it started at."""
        started = time.perf_counter()
        deadline = time.monotonic() + ROUND_SHARE * self.config.interval
        rnd = Round(timestamp_ms, self.config.static_tags())
        wanted = self.config.collectors
        found = {"ost": 0, "mdt": 0}
        self.jobs.new_round()
        tick = timestamp_ms / 1000
        # What finished since the last round's deadline first: a run done is free to start.
        ran = self._finished(rnd)
        ran |= self._start_due(rnd, tick)
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
        if "kmsg" in wanted:
            self._guard(rnd, "kmsg", self.kernel_log.collect, rnd)
        self._files_due(rnd, tick)
        running = [o.future for o in self.outside.values() if o.future is not None]
        if running:
            wait(running, timeout=max(0.0, deadline - time.monotonic()))
        ran |= self._finished(rnd)
        self._lateness(rnd, tick, ran)
        rnd.seconds = time.perf_counter() - started
        return rnd

    def _files_due(self, rnd: Round, tick: float) -> None:
        """The owners' accounting and limits (`usage`) and the per-client stats (`exports`)
        when their interval comes round; each one's interval in the `sensor` point."""
        for name, due in self.files_due.items():
            interval = float(self.config.interval_of(name))
            rnd.schedule[f"{name}_interval"] = interval
            if tick < due:
                continue
            function = collect_usage if name == "usage" else self.exports.collect
            self._guard(rnd, name, function, self.tree, rnd)
            self.files_due[name] = tick + interval

    def _start_due(self, rnd: Round, tick: float) -> set[str]:
        """Start the outside collectors due at this tick and not still running."""
        started = set()
        for outside in self.outside.values():
            if tick < outside.due or outside.future is not None:
                continue
            outside.part = Round(rnd.timestamp, rnd.tags)
            outside.future = self._pool.submit(self._timed, outside.part, outside)
            outside.due = tick + outside.interval
            started.add(outside.name)
        return started

    def _finished(self, rnd: Round) -> set[str]:
        """The points of the outside runs that finished, into this round's send."""
        finished = set()
        for outside in self.outside.values():
            if outside.future is None or not outside.future.done():
                continue
            part, outside.seconds = outside.part, outside.future.result()
            outside.future = outside.part = None
            finished.add(outside.name)
            rnd.errors += part.errors
            rnd.lines.extend(part.lines)
        return finished

    def _lateness(self, rnd: Round, tick: float, ran: set[str]) -> None:
        """Each outside collector's interval, and for those that ran or were due this round
        its last run's duration and how long it is overdue (a run still going at its due
        time)."""
        for outside in self.outside.values():
            rnd.schedule[f"{outside.name}_interval"] = outside.interval
            overdue = outside.future is not None and tick >= outside.due
            if outside.name not in ran and not overdue:
                continue
            late = tick - outside.due if overdue else 0.0
            rnd.schedule[f"{outside.name}_late"] = round(late, 3)
            if outside.seconds is not None:
                rnd.schedule[f"{outside.name}_seconds"] = round(outside.seconds, 3)

    def _timed(self, part: Round, outside: Outside) -> float:
        started = time.perf_counter()
        self._guard(part, outside.name, outside.run, part)
        return time.perf_counter() - started

    def commit(self) -> None:
        """The round's points are sent or spooled: keep where the kernel log was read to."""
        try:
            self.kernel_log.commit()
        except OSError as error:
            report_problem(self.kernel_log.state_path or "kmsg state", str(error))

    def close(self) -> None:
        """Let the threads of the outside collectors go (a run still going is not waited for:
        its command's timeout ends it)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.kernel_log.close()
        if self.santricity is not None:
            self.santricity.close()

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
        **rnd.counts,
        **rnd.schedule,
    }
