"""The storage arrays' state (`array`): drives, volume groups and controllers.

Arrays are reached through a small interface, `ArraySource`, so the virtual rack's array tool
and a real array's REST API or CLI can stand behind the same collector. A source returns
`ArrayComponent`s; it knows its own state words, so it also decides which mean "ok".

`CommandArraySource` runs a command that prints the arrays as JSON:

    {"arrays": [{"name": "ssu1-array1",
                 "drives": [{"id": "99.1.3", "state": "optimal"}, ...],
                 "volume_groups": [{"id": "ost0000", "state": "degraded"}, ...],
                 "controllers": [{"id": "A", "state": "optimal"}, ...]}]}

which a wrapper around any vendor tool can print.
"""

from __future__ import annotations

import json
import subprocess
from typing import NamedTuple, Protocol

from sensors.bmc import run_command
from sensors.rounds import Round

COMPONENT_KINDS = {"drives": "drive", "volume_groups": "volume_group", "controllers": "controller"}
# State words (E-Series/SANtricity and generic) that mean "working as designed". A hot spare
# waiting in standby is fine; degraded, failed, offline, removed, ... are not.
OK_STATES = {"optimal", "ok", "online", "standby", "spare", "hot_spare", "unassigned"}


class ArrayComponent(NamedTuple):
    array: str
    component: str  # drive, volume_group, controller
    id: str
    state: str
    ok: bool


class ArraySource(Protocol):
    def components(self) -> list[ArrayComponent]: ...


def components_from_json(text: str) -> list[ArrayComponent]:
    document = json.loads(text)
    found = []
    for array in document["arrays"]:
        name = str(array["name"])
        for key, component in COMPONENT_KINDS.items():
            for item in array.get(key, []):
                state = str(item["state"])
                ok = item.get("ok")
                if ok is None:
                    ok = state.lower() in OK_STATES
                found.append(ArrayComponent(name, component, str(item["id"]), state, bool(ok)))
    return found


class CommandArraySource:
    """Runs `command` and reads the JSON above from its standard output."""

    def __init__(self, command: str, timeout: float = 20.0) -> None:
        self.command = command
        self.timeout = timeout

    def components(self) -> list[ArrayComponent]:
        return components_from_json(run_command(self.command, self.timeout))


def collect_arrays(rnd: Round, source: ArraySource, where: str) -> None:
    try:
        components = source.components()
    except (
        OSError,
        subprocess.SubprocessError,
        RuntimeError,
        ValueError,
        KeyError,
        TypeError,
    ) as error:
        rnd.problem(where, error)
        return
    for item in components:
        rnd.add(
            "array",
            {"array": item.array, "component": item.component, "id": item.id},
            {"state": item.state, "ok": 1 if item.ok else 0},
        )
