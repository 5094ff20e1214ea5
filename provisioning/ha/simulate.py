"""What-if checks: where do the targets run after a failure, according to Pacemaker itself.

Runs the real scheduler (`crm_simulate`) on a CIB file, no cluster needed. `simulate()` first
brings both nodes up, then applies failures one by one, each as its own cluster transition:

- NodeLost(node): the node drops out of the cluster (crash, heartbeat link down); it is fenced.
- NodeReturns(node): the node rejoins after repair.
- LnetUnhealthy(node), LustreUnhealthy(node): the health agent on the node reports 0;
  LnetHealthy(node), LustreHealthy(node): it reports healthy again.
- AttributeChange(node, name, value): any transient node attribute (value None removes it).
- MonitorFails(resource, node): one failed recurring monitor of a target.
- an operator's act (provisioning.ha.operator: move, ban, clear, standby), which runs its own
  commands on the CIB (`OperatorAct`, `Simulation.run_command`).

crm_simulate pretends every action succeeds, and it runs no resource agents, so it does not
play the health agents' part: wherever a healthLNET or healthLUSTRE clone instance runs and its
attribute is not set, this module sets it to the healthy value, as the agent would on its first
monitor, and lets Pacemaker react. A value set by a failure is left alone.

Every call works in its own temporary directory and removes it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from provisioning.ha.cluster import LNET_ATTRIBUTE, LUSTRE_ATTRIBUTE

TOOL_TIMEOUT_SECONDS = 120
# Give up if the health attributes never stop changing what Pacemaker wants to do.
MAX_SETTLE_ROUNDS = 4
# The Lustre agent's monitor answers "not running" (7) when the target is not mounted.
OCF_NOT_RUNNING = 7


class SimulationError(RuntimeError):
    """crm_simulate or another Pacemaker tool could not run the what-if."""


class WhatIfError(SimulationError, ValueError):
    """The what-if itself is wrong: unreadable, or naming no node or target of the cluster."""


@dataclass(frozen=True)
class NodeLost:
    node: str


@dataclass(frozen=True)
class NodeReturns:
    node: str


@dataclass(frozen=True)
class AttributeChange:
    node: str
    name: str
    value: str | None


@dataclass(frozen=True)
class LnetUnhealthy:
    node: str


@dataclass(frozen=True)
class LustreUnhealthy:
    node: str


@dataclass(frozen=True)
class LnetHealthy:
    """LNet repaired: the healthLNET agent reports its healthy value again."""

    node: str


@dataclass(frozen=True)
class LustreHealthy:
    node: str


@dataclass(frozen=True)
class MonitorFails:
    resource: str
    node: str | None = None  # None: where the resource runs now
    rc: int = OCF_NOT_RUNNING


@runtime_checkable
class OperatorAct(Protocol):
    """An operator's act (``pcs resource move``, ``ban``, ``clear``, ``node standby``; see
    provisioning.ha.operator): it runs its own commands on the simulation's CIB. Acts and
    failures mix in one what-if; this module knows acts only by this interface."""

    def apply_to(self, simulation: Simulation) -> None: ...


Failure = (
    NodeLost
    | NodeReturns
    | AttributeChange
    | LnetUnhealthy
    | LustreUnhealthy
    | LnetHealthy
    | LustreHealthy
    | MonitorFails
    | OperatorAct
)
HealthChange = LnetUnhealthy | LustreUnhealthy | LnetHealthy | LustreHealthy | AttributeChange


@dataclass(frozen=True)
class Transition:
    """One crm_simulate run: its input CIB and its arguments, kept to replay it as text."""

    label: str
    cib_xml: str
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class SimulationResult:
    """Where each target runs after the what-if, and what Pacemaker did on the way.

    `placements`: target label → node, None when it runs nowhere. `fenced`: nodes fenced by the
    failures of this call, in order. `cib_xml`: the resulting CIB, status included, to carry on
    from with `simulate_from()`.
    """

    placements: dict[str, str | None]
    fenced: tuple[str, ...]
    online_nodes: tuple[str, ...]
    cib_xml: str = field(repr=False)
    transitions: tuple[Transition, ...] = field(repr=False)
    # Where the health agents run: simulate_from() plays them on from there.
    health_agent_nodes: dict[str, tuple[str, ...]] = field(repr=False, default_factory=dict)

    @functools.cached_property
    def summary(self) -> str:
        """crm_simulate's own text for every transition of this call, replayed on demand."""
        return replay_text(self.transitions)

    def targets_on(self, node: str) -> list[str]:
        return sorted(label for label, where in self.placements.items() if where == node)


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    output: str


def _tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        raise SimulationError(f"{name} is not installed (Debian package pacemaker-cli-utils)")
    return path


def _run(
    arguments: Sequence[str], cib_file: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("CIB_file", None)
    if cib_file is not None:
        env["CIB_file"] = str(cib_file)
    try:
        return subprocess.run(
            [_tool(arguments[0]), *arguments[1:]],
            capture_output=True,
            text=True,
            env=env,
            timeout=TOOL_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise SimulationError(f"{arguments[0]} took more than {error.timeout} s") from error


@functools.lru_cache(maxsize=1)
def local_feature_set() -> str:
    """The CRM feature set of the Pacemaker installed here (what its empty CIB carries)."""
    completed = _run(["cibadmin", "--empty"])
    match = re.search(r'crm_feature_set="([0-9.]+)"', completed.stdout)
    if completed.returncode != 0 or match is None:
        raise SimulationError(f"cibadmin --empty failed: {completed.stderr.strip()}")
    return match.group(1)


def _with_feature_set(cib_xml: str) -> str:
    # A live cluster's DC stamps crm_feature_set on the CIB. Without it the scheduler reads
    # fail counts in the pre-1.1.17 per-resource format, ignores the per-operation ones that
    # failures write, and migration-threshold never triggers.
    root = _parse(cib_xml, "CIB")
    if root.get("crm_feature_set"):
        return cib_xml
    root.set("crm_feature_set", local_feature_set())
    return ET.tostring(root, encoding="unicode")


def _parse(text: str, what: str) -> ET.Element:
    try:
        return ET.fromstring(text)
    except ET.ParseError as error:
        raise SimulationError(f"{what} is not XML: {error}") from error


def verify(cib_xml: str) -> VerifyResult:
    """crm_verify on a CIB. Bring the nodes up first (simulate()): an empty status fails."""
    with tempfile.TemporaryDirectory(prefix="ostara-ha-") as workdir:
        path = Path(workdir) / "cib.xml"
        path.write_text(cib_xml)
        completed = _run(["crm_verify", "--xml-file", str(path)])
    output = (completed.stdout + completed.stderr).strip()
    return VerifyResult(completed.returncode == 0 and not output, output)


def cib_nodes(cib_xml: str) -> tuple[str, ...]:
    root = _parse(cib_xml, "CIB")
    return tuple(node.get("uname", "") for node in root.iterfind("./configuration/nodes/node"))


@dataclass(frozen=True)
class _HealthAgent:
    agent: str  # healthLNET or healthLUSTRE
    primitive: str  # its id in the configuration
    attribute: str
    healthy_value: str


def _health_agents(root: ET.Element) -> tuple[_HealthAgent, ...]:
    """The health clones in the configuration, the attribute each writes and its healthy value."""
    agents = []
    for primitive in root.iterfind("./configuration/resources/clone/primitive"):
        if primitive.get("provider") != "lustre":
            continue
        params = {
            nv.get("name"): nv.get("value", "")
            for nv in primitive.iterfind("./instance_attributes/nvpair")
        }
        if primitive.get("type") == "healthLNET":
            # The agent writes multiplier × (NIDs of host_list answering lctl ping).
            multiplier = int(params.get("multiplier") or 1)
            answering = max(1, len(params.get("host_list", "").split()))
            agents.append(
                _HealthAgent(
                    "healthLNET",
                    primitive.get("id", ""),
                    params.get("name") or LNET_ATTRIBUTE,
                    str(multiplier * answering),
                )
            )
        elif primitive.get("type") == "healthLUSTRE":
            agents.append(
                _HealthAgent(
                    "healthLUSTRE",
                    primitive.get("id", ""),
                    params.get("name") or LUSTRE_ATTRIBUTE,
                    "1",
                )
            )
    return tuple(agents)


def node_attributes(cib_xml: str, node: str) -> dict[str, str]:
    """The transient attributes of a node in a CIB's status (health values, fail counts)."""
    return _transient_attributes(_parse(cib_xml, "CIB"), node)


def _transient_attributes(root: ET.Element, node: str) -> dict[str, str]:
    for state in root.iterfind("./status/node_state"):
        if state.get("uname") == node:
            return {
                nv.get("name", ""): nv.get("value", "")
                for nv in state.iterfind("./transient_attributes/instance_attributes/nvpair")
            }
    return {}


def _monitor_interval_ms(root: ET.Element, resource: str) -> int:
    for primitive in root.iter("primitive"):
        if primitive.get("id") != resource:
            continue
        for op in primitive.iterfind("./operations/op"):
            if op.get("name") == "monitor":
                return _interval_ms(op.get("interval", "0"))
        raise WhatIfError(f"resource {resource} has no monitor operation")
    raise WhatIfError(f"no resource {resource!r} in the configuration")


_UNITS_MS = {
    "ms": 1,
    "msec": 1,
    "s": 1000,
    "sec": 1000,
    "": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "hr": 3_600_000,
}


def _interval_ms(text: str) -> int:
    match = re.fullmatch(r"\s*([0-9]+)\s*([a-z]*)\s*", text)
    if not match or match.group(2) not in _UNITS_MS:
        raise SimulationError(f"cannot read interval {text!r}")
    return int(match.group(1)) * _UNITS_MS[match.group(2)]


@dataclass
class _Status:
    placements: dict[str, str | None]
    online: tuple[str, ...]
    health_nodes: dict[str, tuple[str, ...]]  # health agent primitive id → nodes it runs on
    fenced: tuple[str, ...]


def _read_result(xml_text: str) -> _Status:
    root = _parse(xml_text, "crm_simulate output")
    status = root.find("./status")
    if status is not None and status.get("code") not in (None, "0"):
        raise SimulationError(f"crm_simulate: {status.get('message')}")
    revised = root.find("./revised_cluster_status")
    if revised is None:
        revised = root.find("./cluster_status")
    if revised is None:
        raise SimulationError("crm_simulate printed no cluster status")
    online = tuple(
        node.get("name", "")
        for node in revised.iterfind("./nodes/node")
        if node.get("online") == "true"
    )
    placements: dict[str, str | None] = {}
    for resource in revised.iterfind("./resources/resource"):
        if resource.get("resource_agent") != "ocf:lustre:Lustre":
            continue
        running = [node.get("name") for node in resource.iterfind("./node")]
        placements[resource.get("id", "")] = (
            running[0] if running and resource.get("active") == "true" else None
        )
    health_nodes: dict[str, tuple[str, ...]] = {}
    for clone in revised.iterfind("./resources/clone"):
        for instance in clone.iterfind("./resource"):
            if instance.get("active") == "true":
                nodes = tuple(node.get("name", "") for node in instance.iterfind("./node"))
                key = instance.get("id", "")
                health_nodes[key] = health_nodes.get(key, ()) + nodes
    fenced = tuple(
        action.get("target", "")
        for action in root.iterfind("./transition/fencing_action")
        if action.get("op") in ("reboot", "off")
    )
    return _Status(placements, online, health_nodes, fenced)


class Simulation:
    """A CIB file in a temporary directory, moved on one transition at a time: failures
    (``apply``) and an operator's acts (``run_command``, see provisioning.ha.operator)."""

    def __init__(self, workdir: Path, cib_xml: str) -> None:
        self.workdir = workdir
        self.cib = workdir / "cib.xml"
        self.cib.write_text(_with_feature_set(cib_xml))
        self.nodes = cib_nodes(cib_xml)
        self.health_agents = _health_agents(_parse(cib_xml, "CIB"))
        self.transitions: list[Transition] = []
        self.fenced: list[str] = []
        self.status: _Status | None = None
        self.count = 0

    def check_node(self, node: str) -> None:
        if node not in self.nodes:
            raise WhatIfError(f"{node!r} is not a node of this cluster ({', '.join(self.nodes)})")

    def transition(self, label: str, arguments: Sequence[str]) -> _Status:
        self.count += 1
        output = self.workdir / f"step{self.count}.xml"
        cib_before = self.cib.read_text()
        completed = _run(
            [
                "crm_simulate",
                "--xml-file",
                str(self.cib),
                *arguments,
                "--simulate",
                "--save-output",
                str(output),
                "--output-as=xml",
            ]
        )
        if completed.returncode != 0:
            raise SimulationError(
                f"crm_simulate failed ({completed.returncode}): {completed.stderr.strip()}"
            )
        self.status = _read_result(completed.stdout)
        self.transitions.append(Transition(label, cib_before, tuple(arguments)))
        self.fenced += self.status.fenced
        self.cib = output
        return self.status

    def set_attribute(self, node: str, name: str, value: str | None) -> None:
        self.check_node(node)
        if value is None:
            arguments = [
                "crm_attribute",
                "--node",
                node,
                "--name",
                name,
                "--delete",
                "--lifetime",
                "reboot",
            ]
        else:
            arguments = [
                "crm_attribute",
                "--node",
                node,
                "--name",
                name,
                "--update",
                value,
                "--lifetime",
                "reboot",
            ]
        completed = _run(arguments, cib_file=self.cib)
        if completed.returncode != 0:
            raise SimulationError(
                f"setting {name}={value} on {node} failed: {completed.stderr.strip()}"
            )

    def settle(self) -> None:
        """Play the health agents: set the missing attributes where their clones run."""
        for _ in range(MAX_SETTLE_ROUNDS):
            assert self.status is not None
            root = _parse(self.cib.read_text(), "CIB")
            changed = False
            for agent in self.health_agents:
                for node in self.status.health_nodes.get(agent.primitive, ()):
                    if agent.attribute not in _transient_attributes(root, node):
                        self.set_attribute(node, agent.attribute, agent.healthy_value)
                        changed = True
            if not changed:
                return
            self.transition("health agents report", [])
        raise SimulationError("the cluster did not settle")

    def bring_up(self) -> None:
        arguments = [argument for node in self.nodes for argument in ("--node-up", node)]
        self.transition(f"nodes up: {', '.join(self.nodes)}", arguments)
        self.settle()

    def apply(self, failure: Failure) -> None:
        if isinstance(failure, NodeLost):
            self.check_node(failure.node)
            self.transition(f"{failure.node} lost", ["--node-fail", failure.node])
        elif isinstance(failure, NodeReturns):
            self.check_node(failure.node)
            self.transition(f"{failure.node} returns", ["--node-up", failure.node])
        elif isinstance(failure, HealthChange):
            name, value = self._attribute_change(failure)
            self.set_attribute(failure.node, name, value)
            self.transition(f"{failure.node}: {name}={value}", [])
        elif isinstance(failure, MonitorFails):
            self.transition(*self._monitor_failure(failure))
        elif isinstance(failure, OperatorAct):
            failure.apply_to(self)
        else:
            raise WhatIfError(f"unknown failure {failure!r}")
        self.settle()

    def run_command(
        self, arguments: Sequence[str], description: str, schedule: bool = True
    ) -> None:
        """Run one cluster command (crm_resource, crm_attribute) on this CIB as an operator
        would on the pair, then (``schedule``) let the scheduler act on it."""
        completed = _run(arguments, cib_file=self.cib)
        if completed.returncode != 0:
            raise WhatIfError(f"{description}: {completed.stderr.strip()}")
        if schedule:
            self.transition(description, [])

    def _attribute_change(self, failure: HealthChange) -> tuple[str, str | None]:
        if isinstance(failure, AttributeChange):
            return failure.name, failure.value
        lnet = isinstance(failure, LnetUnhealthy | LnetHealthy)
        agent_type = "healthLNET" if lnet else "healthLUSTRE"
        for agent in self.health_agents:
            if agent.agent == agent_type:
                healthy = isinstance(failure, LnetHealthy | LustreHealthy)
                return agent.attribute, agent.healthy_value if healthy else "0"
        raise SimulationError(f"the configuration has no {agent_type} clone")

    def _monitor_failure(self, failure: MonitorFails) -> tuple[str, list[str]]:
        node = failure.node
        if node is None:
            node = self.status.placements.get(failure.resource) if self.status else None
            if node is None:
                raise WhatIfError(f"{failure.resource} runs nowhere; name the node")
        self.check_node(node)
        interval = _monitor_interval_ms(_parse(self.cib.read_text(), "CIB"), failure.resource)
        injection = f"{failure.resource}_monitor_{interval}@{node}={failure.rc}"
        return f"{failure.resource} monitor fails on {node}", ["--op-inject", injection]

    def result(self) -> SimulationResult:
        assert self.status is not None
        return SimulationResult(
            placements=dict(self.status.placements),
            fenced=tuple(self.fenced),
            online_nodes=self.status.online,
            cib_xml=self.cib.read_text(),
            transitions=tuple(self.transitions),
            health_agent_nodes=dict(self.status.health_nodes),
        )


def simulate(cib_xml: str, failures: Iterable[Failure] = ()) -> SimulationResult:
    """Bring both nodes up, then apply the failures in order; see the module docstring."""
    with tempfile.TemporaryDirectory(prefix="ostara-ha-") as workdir:
        simulation = Simulation(Path(workdir), cib_xml)
        simulation.bring_up()
        for failure in failures:
            simulation.apply(failure)
        return simulation.result()


def simulate_from(previous: SimulationResult, failures: Iterable[Failure]) -> SimulationResult:
    """Carry on from an earlier result; `fenced` lists only what these failures fenced."""
    with tempfile.TemporaryDirectory(prefix="ostara-ha-") as workdir:
        simulation = Simulation(Path(workdir), previous.cib_xml)
        simulation.status = _Status(
            dict(previous.placements), previous.online_nodes, dict(previous.health_agent_nodes), ()
        )
        for failure in failures:
            simulation.apply(failure)
        return simulation.result()


def simulate_sequence(cib_xml: str, steps: Iterable[Sequence[Failure]]) -> list[SimulationResult]:
    """One result per step: the first step starts from both nodes up, each next from the last."""
    results: list[SimulationResult] = []
    for number, failures in enumerate(steps):
        if number == 0:
            results.append(simulate(cib_xml, failures))
        else:
            results.append(simulate_from(results[-1], failures))
    return results


def replay_text(transitions: Sequence[Transition]) -> str:
    """Run the recorded transitions again in crm_simulate's text mode (nothing is saved)."""
    parts = []
    with tempfile.TemporaryDirectory(prefix="ostara-ha-") as workdir:
        path = Path(workdir) / "cib.xml"
        for transition in transitions:
            path.write_text(transition.cib_xml)
            completed = _run(
                ["crm_simulate", "--xml-file", str(path), *transition.arguments, "--simulate"]
            )
            parts.append(f"=== {transition.label} ===\n{completed.stdout.rstrip()}\n")
    return "\n".join(parts)
