"""The storage arrays' state (`array`): drives, volume groups and controllers.

Arrays are reached through a small interface, `ArraySource`, so the virtual rack's array tool
and a real array's REST API or CLI can stand behind the same collector. A source returns
`ArrayComponent`s; it knows its own state words, so it also decides which mean "ok".

`CommandArraySource` runs a command that prints the arrays as JSON:

    {"arrays": [{"name": "ssu1-array1",
                 "drives": [{"id": "99.1.3", "state": "optimal"}, ...],
                 "volume_groups": [{"id": "ost0000", "state": "degraded"}, ...],
                 "controllers": [{"id": "A", "state": "optimal"}, ...]}]}

which a wrapper around any vendor tool can print. `SMcliArraySource` asks E-Series arrays
(and the virtual rack's SMcli) directly:

    SMcli -n <array> -S -c "show allDrives; show allVolumeGroups; show allControllers;"

and reads the drive table (`tray, drawer, slot  status ...`), each `VOLUME GROUP <name>`
block's `Status:` (and its `Operation:  Reconstruction (42% complete)` line while one runs) and
each `Controller in Tray 0, Slot <X>` block's `Status:`. A JSON volume group may carry
"operation" and "progress" the same way.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, Protocol

from sensors import schema
from sensors.bmc import run_command
from sensors.rounds import Round

COMPONENT_KINDS = {"drives": "drive", "volume_groups": "volume_group", "controllers": "controller"}
# State words (E-Series/SANtricity and generic) that mean "working as designed". A hot spare
# waiting in standby is fine; degraded, failed, offline, removed, ... are not.
OK_STATES = {"optimal", "ok", "online", "standby", "spare", "hot_spare", "unassigned"}
SMCLI_SCRIPT = "show allDrives; show allVolumeGroups; show allControllers;"
_DRIVE_ROW_RE = re.compile(r"^\s+(\d+),\s*(\d+),\s*(\d+)\s+([A-Za-z][\w-]*)\b")
_GROUP_RE = re.compile(r"^VOLUME GROUP (\S+)")
_CONTROLLER_RE = re.compile(r"^Controller in Tray \d+, Slot (\w+)")
_STATUS_RE = re.compile(r"^\s+Status:\s+(\S.*?)\s*$")
# "   Operation:           Reconstruction (42% complete)" in a VOLUME GROUP block.
_OPERATION_RE = re.compile(r"^\s+Operation:\s+(\S.*?)\s*\((\d+)%\s*complete\)", re.IGNORECASE)


class ArrayComponent(NamedTuple):
    array: str
    component: str  # drive, volume_group, controller
    id: str
    state: str
    ok: bool
    # A volume group's long-running operation ("reconstruction", "copyback") and its percent.
    operation: str = ""
    progress: int | None = None


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
                progress = item.get("progress")
                found.append(
                    ArrayComponent(
                        name,
                        component,
                        str(item["id"]),
                        state,
                        bool(ok),
                        str(item.get("operation") or "").lower(),
                        None if progress is None else int(progress),
                    )
                )
    return found


class CommandArraySource:
    """Runs `command` and reads the JSON above from its standard output."""

    def __init__(self, command: str, timeout: float = 20.0) -> None:
        self.command = command
        self.timeout = timeout

    def components(self) -> list[ArrayComponent]:
        return components_from_json(run_command(self.command, self.timeout))


def components_from_smcli(array: str, text: str) -> list[ArrayComponent]:
    """Drives, volume groups and controllers of one array from SMcli's `show` output."""
    found = []
    block: tuple[str, str] | None = None  # (component, id) of the block being read
    for line in text.splitlines():
        drive = _DRIVE_ROW_RE.match(line)
        if drive:
            tray, drawer, slot, status = drive.groups()
            state = status.lower()
            found.append(
                ArrayComponent(array, "drive", f"{tray},{drawer},{slot}", state, state in OK_STATES)
            )
            continue
        header = _GROUP_RE.match(line) or _CONTROLLER_RE.match(line)
        if header:
            kind = "volume_group" if line.startswith("VOLUME GROUP") else "controller"
            block = (kind, header.group(1))
            continue
        if block is None:
            continue
        status = _STATUS_RE.match(line)
        newest = found[-1] if found else None
        if status and (newest is None or (newest.component, newest.id) != block):
            state = status.group(1).lower()
            found.append(ArrayComponent(array, block[0], block[1], state, state in OK_STATES))
            continue
        operation = _OPERATION_RE.match(line)
        if operation and newest is not None and (newest.component, newest.id) == block:
            # The group's Status: line came first; the operation is added to it.
            found[-1] = newest._replace(
                operation=operation.group(1).lower(), progress=int(operation.group(2))
            )
    if not found:
        raise ValueError(f"no drives, volume groups or controllers in the output for {array}")
    return found


class SMcliArraySource:
    """E-Series arrays through SMcli, one call per array (`SMcli -n <name> -S -c ...`)."""

    def __init__(self, smcli: str, arrays: list[str], timeout: float = 20.0) -> None:
        self.smcli = smcli
        self.arrays = arrays
        self.timeout = timeout

    def components(self) -> list[ArrayComponent]:
        """All arrays, asked at the same time (each call waits on the array's controller)."""
        with ThreadPoolExecutor(max_workers=max(1, len(self.arrays))) as pool:
            parts = list(pool.map(self._array, self.arrays))
        return [component for part in parts for component in part]

    def _array(self, array: str) -> list[ArrayComponent]:
        command = f"{self.smcli} -n {shlex.quote(array)} -S -c {shlex.quote(SMCLI_SCRIPT)}"
        return components_from_smcli(array, run_command(command, self.timeout))


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
    write_components(rnd, components)


def write_components(rnd: Round, components: list[ArrayComponent]) -> None:
    """One `array` point per drive, volume group and controller, whichever source read them.

    The controllers last: the health engine takes an array's controllers as its round, and a
    round goes out in batches (sensors.sender), one after the other. Written after the drives
    and groups, a round whose controllers have landed has its faults in too; written before,
    a degraded group in a later batch would look mended until that batch landed. Each
    controller's point counts its array's groups not ok (``schema.GROUPS_NOT_OK``)."""
    not_ok: dict[str, int] = {}
    for item in components:
        if item.component == "volume_group" and not item.ok:
            not_ok[item.array] = not_ok.get(item.array, 0) + 1
    for item in sorted(components, key=lambda item: item.component == "controller"):
        fields: dict = {"state": item.state, "ok": 1 if item.ok else 0}
        if item.component == "controller":
            fields[schema.GROUPS_NOT_OK] = not_ok.get(item.array, 0)
        if item.operation:
            fields["operation"] = item.operation
            if item.progress is not None:
                fields["progress"] = item.progress
        rnd.add(
            "array",
            {schema.ARRAY: item.array, schema.COMPONENT: item.component, schema.ID: item.id},
            fields,
        )
