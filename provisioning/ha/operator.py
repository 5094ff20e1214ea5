"""An operator's acts on a running pair, and what Pacemaker will do about them.

Each act is the command an operator would type (``pcs resource move`` / ``ban`` / ``clear``,
``pcs node standby``, written as the ``crm_resource`` and ``crm_attribute`` calls pcs makes):
``argv()`` is what the playbook runs on the pair, and ``what_if()`` runs the same commands on a
copy of the pair's live CIB (``cibadmin --query``, status included) and asks the real scheduler
(``crm_simulate``) where every target ends up. Nothing here touches a cluster.

    python -m provisioning.ha PLAN.json --what-if move:scratch-OST0000@oss02
    python -m provisioning.ha PLAN.json --live-cib cib.xml --what-if standby:oss01
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from provisioning.ha.history import clean_up_file
from provisioning.ha.simulate import Simulation, SimulationError, WhatIfError

# ISO 8601 durations as crm_resource --lifetime takes them: PT30M, PT2H, P1D.
LIFETIME_RE = re.compile(
    r"^P(?=[0-9]|T[0-9])(?:[0-9]+D)?(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+S)?)?$"
)
# Resource ids and node names as the portal names them (labels, hostnames).
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def _name(value: str, what: str) -> str:
    if not _NAME_RE.fullmatch(value or ""):
        raise WhatIfError(f"{what} {value!r} is not a valid name")
    return value


def check_lifetime(value: str) -> str:
    if not LIFETIME_RE.fullmatch(value or ""):
        raise WhatIfError(f"lifetime {value!r} is not an ISO 8601 duration such as PT1H or P1D")
    return value


class _Act:
    """What every act shares: it is a simulate.OperatorAct, so acts and failures mix in one
    what-if (``simulate(cib, [NodeLost("oss01"), Move(...)])``)."""

    def apply_to(self, simulation: Simulation) -> None:
        apply(simulation, self)


@dataclass(frozen=True)
class Move(_Act):
    """Run the target on ``node`` (a location preference that outweighs stickiness)."""

    resource: str
    node: str
    lifetime: str | None = None

    def argv(self) -> list[str]:
        argv = ["crm_resource", "--move", "--resource", self.resource, "--node", self.node]
        return argv + (["--lifetime", self.lifetime] if self.lifetime else [])

    def describe(self) -> str:
        return f"move {self.resource} to {self.node}"


@dataclass(frozen=True)
class Ban(_Act):
    """Keep the target off ``node`` (for ``lifetime``, or until cleared)."""

    resource: str
    node: str
    lifetime: str | None = None

    def argv(self) -> list[str]:
        argv = ["crm_resource", "--ban", "--resource", self.resource, "--node", self.node]
        return argv + (["--lifetime", self.lifetime] if self.lifetime else [])

    def describe(self) -> str:
        until = f" for {self.lifetime}" if self.lifetime else ""
        return f"keep {self.resource} off {self.node}{until}"


@dataclass(frozen=True)
class Clear(_Act):
    """Remove the move and ban constraints of a target: stickiness keeps it where it runs."""

    resource: str

    def argv(self) -> list[str]:
        return ["crm_resource", "--clear", "--resource", self.resource]

    def describe(self) -> str:
        return f"clear the constraints of {self.resource}"


@dataclass(frozen=True)
class Standby(_Act):
    """Put a node in standby (True) or take it out (False), as ``pcs node standby``."""

    node: str
    on: bool = True

    def argv(self) -> list[str]:
        return [
            "crm_attribute",
            "--node",
            self.node,
            "--name",
            "standby",
            "--update",
            "on" if self.on else "off",
        ]

    def describe(self) -> str:
        return f"{'put' if self.on else 'take'} {self.node} {'in' if self.on else 'out of'} standby"


@dataclass(frozen=True)
class Cleanup(_Act):
    """Erase the target's failures (``pcs resource cleanup``): a node where its start failed
    may run it again once the cause is repaired (provisioning.ha.history)."""

    resource: str

    def argv(self) -> list[str]:
        return ["crm_resource", "--cleanup", "--resource", self.resource]

    def describe(self) -> str:
        return f"clean up the failures of {self.resource}"


Action = Move | Ban | Clear | Standby | Cleanup


def validate(action: Action) -> Action:
    """Names and lifetimes fit a Pacemaker id and crm_resource before anything runs."""
    if isinstance(action, Move | Ban | Clear | Cleanup):
        _name(action.resource, "target")
    if isinstance(action, Move | Ban | Standby):
        _name(action.node, "node")
    if isinstance(action, Move | Ban) and action.lifetime:
        check_lifetime(action.lifetime)
    return action


def apply(simulation: Simulation, action: Action) -> None:
    """Run the act's command on the simulation's CIB, then let the scheduler act on it."""
    validate(action)
    if isinstance(action, Move | Ban | Standby):
        simulation.check_node(action.node)
    if isinstance(action, Cleanup):
        # crm_resource --cleanup on a CIB file is a dry run: make the controller's edit.
        clean_up_file(simulation.cib, action.resource)
        simulation.transition(action.describe(), [])
        return
    simulation.run_command(action.argv(), action.describe())


_ACTION_RE = re.compile(
    r"^(?P<kind>move|ban|clear|cleanup|standby|unstandby):(?P<subject>[^@]+)(?:@(?P<node>.+))?$"
)


def parse_action(text: str) -> Action | None:
    """move:TARGET@NODE, ban:TARGET@NODE, clear:TARGET, cleanup:TARGET, standby:NODE,
    unstandby:NODE;
    None when ``text`` is not an operator's act (it may be a failure)."""
    match = _ACTION_RE.match(text.strip())
    if not match:
        return None
    kind, subject, node = match.group("kind"), match.group("subject"), match.group("node")
    if kind in ("move", "ban"):
        if node is None:
            raise WhatIfError(f"{text!r}: name the node, as {kind}:TARGET@NODE")
        return validate((Move if kind == "move" else Ban)(subject, node))
    if node is not None:
        raise WhatIfError(f"{text!r}: {kind} takes no @NODE")
    if kind == "clear":
        return validate(Clear(subject))
    if kind == "cleanup":
        return validate(Cleanup(subject))
    return validate(Standby(subject, on=kind == "standby"))


@dataclass(frozen=True)
class WhatIf:
    """Where each target runs now and after the acts, according to Pacemaker."""

    before: dict[str, str | None]
    after: dict[str, str | None]
    online_now: tuple[str, ...]
    online_nodes: tuple[str, ...]  # after the acts
    fenced: tuple[str, ...]

    @property
    def moves(self) -> list[tuple[str, str | None, str | None]]:
        """(target, from, to) for every target whose place changes."""
        return [
            (label, self.before.get(label), where)
            for label, where in sorted(self.after.items())
            if where != self.before.get(label)
        ]

    def lines(self) -> list[str]:
        lines = [
            f"{label}: {source or 'not running'} → {where or 'NOT RUNNING'}"
            for label, source, where in self.moves
        ]
        if self.fenced:
            lines.append(f"Pacemaker would fence {', '.join(self.fenced)}")
        return lines or ["no target moves"]


def current(live_cib_xml: str) -> tuple[dict[str, str | None], tuple[str, ...]]:
    """Where each target runs in a live CIB, and the nodes online, as the scheduler sees it."""
    with tempfile.TemporaryDirectory(prefix="ostara-ha-") as workdir:
        status = Simulation(Path(workdir), live_cib_xml).transition("the cluster now", [])
    return dict(status.placements), status.online


def what_if(live_cib_xml: str, actions: Sequence[Action]) -> WhatIf:
    """The acts applied one after the other to a copy of the live CIB, each followed by the
    transition Pacemaker would run. Raises WhatIfError for a name the cluster does not have."""
    if not actions:
        raise WhatIfError("no action to simulate")
    with tempfile.TemporaryDirectory(prefix="ostara-ha-") as workdir:
        simulation = Simulation(Path(workdir), live_cib_xml)
        before = simulation.transition("the cluster now", [])
        placements_before = dict(before.placements)
        # The commands one after the other, as the playbook runs them on the pair, then the
        # scheduler once on the result: what the cluster does with them. One scheduler run, not
        # one per command (a failback of 12 targets is 24 commands: 24 runs took seconds).
        for action in actions:
            validate(action)
            if isinstance(action, Move | Ban | Standby):
                simulation.check_node(action.node)
            if isinstance(action, Cleanup):
                # crm_resource --cleanup on a CIB file is a dry run: the controller's edit.
                clean_up_file(simulation.cib, action.resource)
            else:
                simulation.run_command(action.argv(), action.describe(), schedule=False)
        simulation.transition(", ".join(action.describe() for action in actions), [])
        # A node out of standby (or back from a reboot) runs its health agents again: they set
        # its attributes, and only then may a target go there. Their stop on standby deleted
        # them (seen on the real Pacemaker); the portal checked its sensors before the act.
        simulation.settle()
        if simulation.status is None:  # pragma: no cover - transition always sets it
            raise SimulationError("crm_simulate gave no status")
        return WhatIf(
            before=placements_before,
            after=dict(simulation.status.placements),
            online_now=before.online,
            online_nodes=simulation.status.online,
            fenced=tuple(simulation.fenced),
        )
