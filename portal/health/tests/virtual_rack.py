"""A virtual rack (simulator/) with the product's own sensor agent (sensors/) running for each
of its servers, writing to the test InfluxDB: the world the health acceptance tests watch.

- The rack is built with the simulator's fast provisioning path, and each pair's Pacemaker
  configuration (provisioning.ha) is pushed through the virtual `cibadmin`, as the provisioning
  playbook does, so failovers are Pacemaker's own decisions (crm_simulate).
- `python -m simulator serve` advances the workload and rewrites the hosts' trees.
- One `sensors.agent.Agent` per server reads that server's tree, runs its `ipmitool sdr`,
  reads its heartbeat (`corosync-cfgtool -s`),
  SAS paths (`multipath -ll`) and LNet (`lnetctl net show`, `lnetctl ping` of the partner),
  and polls the partner's BMC for its chassis power, all as configured on a real server. A
  server that is not running sends nothing, as on real hardware.
- The arrays are watched as the appliance watches them: the rack serves their SANtricity REST
  API (simulator/santricity/, one port per controller) and one more agent, the management
  server's (`MANAGEMENT`), asks it with the `santricity` collector, each array's monitor account
  and its controllers' pinned certificates; the servers' own sensors do not read the arrays.
- The inventory is saved from the same plans and marked provisioned.
- One server's sensor can be stopped and started again (`stop_agent`, `start_agent`), as
  `systemctl restart` does, its spool and kernel log position kept.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from provisioning.ha import build_cib
from provisioning.ha.cluster import pdu_status_commands
from provisioning.ha.plan import read_plan
from provisioning.planner import make_plan
from sensors.agent import Agent
from sensors.collect import Collector
from sensors.config import DEFAULT_INTERVALS, SantricityArray, SensorConfig
from simulator import failures, provision
from simulator.rack import Rack
from simulator.santricity import access
from simulator.santricity.server import ArraysApi

REPO = Path(__file__).resolve().parents[3]
# The management server's name: the `server` tag of the arrays' points.
MANAGEMENT = "ostara"


def host_env(root: Path, host: str | None) -> dict:
    bin_dir = root / "hosts" / host / "bin" if host else root / "bin"
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")


def server_sensor_configs(root: Path, plans: list[dict], **common) -> list[SensorConfig]:
    """Each server's sensor on the virtual rack at `root`, as sensor.yml configures it on a
    provisioned server (its own tree and commands, its partner's BMC and PDU outlet); the
    arrays are left to the management server's collector. `common`: the other settings."""
    configs = []
    for plan in plans:
        pdu_status = pdu_status_commands(read_plan(plan))
        for server in plan["servers"]:
            host = server["hostname"]
            bin_dir = root / "hosts" / host / "bin"
            partner = next(s for s in plan["servers"] if s["hostname"] != host)
            configs.append(
                SensorConfig(
                    server=host,
                    root=str(root / "hosts" / host),
                    role=plan["role"],
                    tags={"ssu": plan["ssu"], "pair": plan["ssu"]},
                    bmc_command=f"{bin_dir / 'ipmitool'} sensor",
                    cluster_command=f"{bin_dir / 'corosync-cfgtool'} -s",
                    multipath_command=f"{bin_dir / 'multipath'} -ll",
                    lnetctl_command=str(bin_dir / "lnetctl"),
                    lnet_peers=tuple(partner.get("nids", [])),
                    partner_host=partner["hostname"],
                    partner_bmc_command=(
                        f"{bin_dir / 'ipmitool'} -I lanplus -C 3 -H {partner['bmc']} "
                        f"-U ostara-fence -f /etc/ostara/fence/bmc-{partner['hostname']} "
                        "chassis power status"
                    ),
                    partner_pdu_command=f"{bin_dir}/{pdu_status[partner['hostname']]}",
                    **common,
                )
            )
    return configs


class VirtualServerAgent(Agent):
    """The sensor agent of one virtual server; sends nothing while its server is down."""

    def __init__(self, config: SensorConfig, collector: Collector, rack_root: Path) -> None:
        super().__init__(config, collector)
        self.rack_root = rack_root

    def round(self, tick: float) -> None:
        with Rack.open(self.rack_root, save_counters=False) as rack:
            running = rack.state["servers"][self.config.server]["state"] == "up"
        if running:
            super().round(tick)


class VirtualRack:
    def __init__(self, root: Path, specs: list[dict], interval: float = 2.0) -> None:
        self.root = root
        self.specs = [copy.deepcopy(spec) for spec in specs]
        self.plans = [make_plan(copy.deepcopy(spec)) for spec in specs]
        self.interval = interval
        self.agents: list[VirtualServerAgent] = []
        self.threads: list[threading.Thread] = []
        self.server_process: subprocess.Popen | None = None
        self.arrays_api: ArraysApi | None = None

    # -- building -------------------------------------------------------------------------

    def build(self) -> None:
        with Rack.open(self.root, create=True) as rack:
            for plan in self.plans:
                provision.build(rack, plan)
            rack.install_commands()
        for plan in self.plans:
            cib = self.root.parent / f"{plan['ssu']}-cib.xml"
            cib.write_text(build_cib(plan))
            self._run(
                plan["servers"][0]["hostname"], ["cibadmin", "--replace", "--xml-file", str(cib)]
            )

    def save_inventory(self) -> list:
        """The same plans in the portal's inventory, provisioned (every target mounted)."""
        from portal.inventory.provisioned import mark_provisioned
        from portal.inventory.services import save_plans

        pairs = save_plans(copy.deepcopy(self.specs))
        mark_provisioned(pairs)
        return pairs

    # -- running --------------------------------------------------------------------------

    def start(
        self,
        influxdb_url: str,
        database: str,
        spool: Path,
        scenario: str = "balanced",
        multipath_queue: float = 0.0,
    ) -> None:
        """Serve the rack and start one sensor per server. ``multipath_queue``: seconds a
        server that lost every SAS path queues its I/O before its partner fences it."""
        log = open(self.root.parent / "serve.log", "ab")  # noqa: SIM115
        self.server_process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "simulator",
                "serve",
                "--rack",
                str(self.root),
                "--interval",
                str(self.interval),
                "--scenario",
                scenario,
                "--multipath-queue",
                str(multipath_queue),
            ],
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        # Every collector at the rack's short interval: a change shows within two rounds
        # whichever collector reports it.
        intervals = dict.fromkeys(DEFAULT_INTERVALS, self.interval)
        self.arrays_api = ArraysApi(self.root)
        self.arrays_api.start()
        self._start_agent(self.array_collector(influxdb_url, database, spool, intervals), None)
        for config in server_sensor_configs(
            self.root,
            self.plans,
            interval=self.interval,
            influxdb_url=influxdb_url,
            database=database,
            timeout=5.0,
            bmc_timeout=10.0,
            intervals=intervals,
        ):
            config.spool_dir = str(spool / config.server)
            self._start_agent(config, config.server)

    def array_collector(
        self, influxdb_url: str, database: str, spool: Path, intervals: dict
    ) -> SensorConfig:
        """The management server's sensor: every array through its REST API, each controller's
        certificate pinned as provisioning pins it (the rack's record of it), each array's own
        monitor password."""
        with Rack.open(self.root, save_counters=False) as rack:
            records = {name: a["management"] for name, a in rack.state["arrays"].items()}
        arrays = tuple(
            SantricityArray(
                name,
                tuple((c["address"], c["port"]) for _, c in sorted(r["controllers"].items())),
                tuple(c["sha256"] for _, c in sorted(r["controllers"].items())),
                user=r["user"],
                password=access.password(self.root, name),
            )
            for name, r in sorted(records.items())
        )
        return SensorConfig(
            server=MANAGEMENT,
            root=str(self.root),
            interval=self.interval,
            collectors=("santricity",),
            influxdb_url=influxdb_url,
            database=database,
            timeout=5.0,
            spool_dir=str(spool / MANAGEMENT),
            santricity_arrays=arrays,
            intervals=intervals,
        )

    def _start_agent(self, config: SensorConfig, host: str | None) -> None:
        """One sensor in a thread; a virtual server's sends nothing while it is down."""
        # The kernel log's place kept in the spool, as the service keeps it (sensors.agent).
        collector = Collector(config, state_dir=config.spool_dir)
        if host is None:
            agent = Agent(config, collector)
        else:
            agent = VirtualServerAgent(config, collector, self.root)
        thread = threading.Thread(target=agent.run, name=f"sensor-{config.server}", daemon=True)
        self.agents.append(agent)
        self.threads.append(thread)
        thread.start()

    def stop(self) -> None:
        for agent in self.agents:
            agent.stop()
        # 15 s for all of them, not each: an interrupted run (Ctrl-C) tears this down within
        # the grace deploy/test.sh gives pytest, however many agents are mid-round.
        deadline = time.monotonic() + 15
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.arrays_api is not None:
            self.arrays_api.stop()
        if self.server_process is not None:
            self.server_process.terminate()
            try:
                self.server_process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.server_process.kill()

    def stop_agent(self, host: str) -> SensorConfig:
        """Stop one server's sensor as `systemctl stop` does (the round under way ends, what it
        read is sent or spooled and its state kept); its configuration, to start it again."""
        index = next(i for i, a in enumerate(self.agents) if a.config.server == host)
        agent, thread = self.agents.pop(index), self.threads.pop(index)
        agent.stop()
        thread.join(timeout=30)
        if thread.is_alive():
            raise RuntimeError(f"the sensor of {host} did not stop within 30 s")
        return agent.config

    def start_agent(self, config: SensorConfig) -> None:
        """Start a stopped server's sensor again with the same configuration and spool."""
        self._start_agent(config, config.server)

    def wait_rounds(self, rounds: int = 1) -> None:
        time.sleep(self.interval * rounds + 0.5)

    # -- failures and the operator --------------------------------------------------------

    def inject(self, kind: str, **where) -> dict:
        with Rack.open(self.root) as rack:
            failure = failures.inject(rack, kind, **where)
            rack.render()
        return failure

    def clear_all(self) -> None:
        with Rack.open(self.root) as rack:
            failures.clear(rack, None)
            rack.render()

    def placement(self) -> dict[str, str | None]:
        with Rack.open(self.root, save_counters=False) as rack:
            return {label: t.get("mounted_on") for label, t in rack.state["targets"].items()}

    def fail_back(self) -> None:
        """The operator's failback: failed starts cleaned up (`crm_resource --cleanup`), then
        every target that is not on its primary moves back (`crm_resource --move`, then
        `--clear` so the location constraint goes)."""
        for plan in self.plans:
            host = plan["servers"][0]["hostname"]
            self._run(host, ["crm_resource", "--cleanup"])
            where = self.placement()
            for target in plan["targets"]:
                if target["kind"] == "MGT" or where.get(target["label"]) == target["primary"]:
                    continue
                for args in (
                    ["--move", "-r", target["label"], "-N", target["primary"]],
                    ["--clear", "-r", target["label"]],
                ):
                    self._run(host, ["crm_resource", *args])

    def _run(self, host: str, argv: list[str]) -> None:
        """A cluster command on one of the rack's servers, as an operator types it there."""
        result = subprocess.run(
            argv, capture_output=True, text=True, env=host_env(self.root, host), timeout=120
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} on {host}: {result.stderr}")
