"""Each array's Major Event Log (MEL), as SANtricity keeps it: a bounded log of numbered events
(sequence numbers only grow until the log is cleared, `clear`), written by the array when its
hardware changes state.

The rack does not log events where each failure is made: `observe` compares each array with
what the log last saw (a small summary of what is not normal) whenever the rack is saved, so
every way a drive, a volume group or a controller changes (an injected failure, a clear, a
reconstruction started from SMcli, the clock finishing one) logs its events once, at the rack's
time. An array seen for the first time starts its log without events for its present state.

Event codes: names and hex ids from SANtricity's critical-event list where it has them
(MEL_EV_CFG_DRIVE_FAILURE 0x226C, MEL_EV_HOT_SPARE_IN_USE 0x2273, MEL_EV_LUN_DOWN 0x2250,
MEL_EV_SYMBOL_CONT_FAIL 0x5005, MEL_EV_DRAWER_REMOVED 0x2862); the informational ones are this
simulator's codes (/work/notes/issue-33-santricity-api.md lists them).
"""

from __future__ import annotations

from simulator.topology import volume_group_health

# Events kept per array (the oldest are dropped): SANtricity's MEL is bounded too; this one
# lives in rack.json, saved at every step of the clock, so it is kept small.
CAPACITY = 1024

# code: (category, priority, critical, component type, description)
EVENTS = {
    0x226C: ("failure", "priorityCritical", True, "drive", "Drive failed"),
    0x2273: ("notification", "priorityCritical", True, "drive", "Hot spare in use"),
    0x2280: ("failure", "priorityCritical", True, "volumeGrp", "Volume group degraded"),
    0x2250: ("failure", "priorityCritical", True, "volumeGrp", "Volume group failed"),
    0x2049: ("stateChange", "priorityInfo", False, "volumeGrp", "Reconstruction started"),
    0x204A: ("stateChange", "priorityInfo", False, "volumeGrp", "Reconstruction completed"),
    0x204B: ("stateChange", "priorityInfo", False, "volumeGrp", "Copyback started"),
    0x204C: ("stateChange", "priorityInfo", False, "volumeGrp", "Copyback completed"),
    0x100A: ("notification", "priorityInfo", False, "drive", "Drive inserted"),
    0x5005: ("failure", "priorityCritical", True, "controller", "Controller failed"),
    0x5006: ("stateChange", "priorityInfo", False, "controller", "Controller optimal"),
    0x2862: ("failure", "priorityCritical", True, "drawer", "Drawer removed"),
}
DRIVE_FAILED = 0x226C
HOT_SPARE_IN_USE = 0x2273
GROUP_DEGRADED = 0x2280
GROUP_FAILED = 0x2250
RECONSTRUCTION_STARTED = 0x2049
RECONSTRUCTION_COMPLETED = 0x204A
COPYBACK_STARTED = 0x204B
COPYBACK_COMPLETED = 0x204C
DRIVE_INSERTED = 0x100A
CONTROLLER_FAILED = 0x5005
CONTROLLER_OPTIMAL = 0x5006
DRAWER_REMOVED = 0x2862

OPERATION_KEYS = ("rebuild", "copyback")


def summary(array: dict) -> dict:
    """What the log compares: drives not in a normal state, groups not optimal or busy,
    controllers, drawers out."""
    drives = {}
    for enclosure in array["enclosures"]:
        for key, drive in enclosure["drives"].items():
            if drive["state"] in ("failed", "replaced", "spare_in_use"):
                drives[f"{enclosure['tray']},{key}"] = drive["state"]
    groups = {}
    for name, group in array["volume_groups"].items():
        health = volume_group_health(array, group)
        operations = {
            key: [group[key]["spare"], group[key].get("replacing") or group[key].get("to")]
            for key in OPERATION_KEYS
            if group.get(key)
        }
        if health["state"] != "optimal" or operations:
            groups[name] = {"state": health["state"], **operations}
    drawers = [
        f"{enclosure['tray']},{d}"
        for enclosure in array["enclosures"]
        for d in enclosure["drawers_offline"]
    ]
    return {
        "drives": drives,
        "groups": groups,
        "controllers": dict(array["controllers"]),
        "drawers": sorted(drawers),
    }


def observe(state: dict, now: float) -> None:
    """Log the events of what changed in each array since the last call (arrays untouched
    since, by simulator.topology.touch, are skipped)."""
    for array in state["arrays"].values():
        log = array.setdefault("mel", {"next": 1, "events": [], "seen": None, "gen": None})
        generation = array.get("gen", 0)
        if log["gen"] == generation and log["seen"] is not None:
            continue
        now_seen = summary(array)
        if log["seen"] is not None:
            for event in _changes(array, log["seen"], now_seen):
                _append(log, now, *event)
        log["seen"] = now_seen
        log["gen"] = generation


def _changes(array: dict, before: dict, after: dict) -> list[tuple]:
    """(code, component id, location) of each event, in the order the array logs them."""
    events: list[tuple] = []
    for name in ("A", "B"):
        was, now = before["controllers"].get(name), after["controllers"].get(name)
        if was == "optimal" and now != "optimal":
            events.append((CONTROLLER_FAILED, name, f"Controller in slot {name}"))
        elif was != "optimal" and now == "optimal":
            events.append((CONTROLLER_OPTIMAL, name, f"Controller in slot {name}"))
    for drawer in sorted(set(after["drawers"]) - set(before["drawers"])):
        tray, number = drawer.split(",")
        events.append((DRAWER_REMOVED, drawer, f"Tray {tray}, Drawer {number}"))
    # Drive failures first, then replacements, then the spares that take over (as logged).
    changed = [
        (key, before["drives"].get(key), after["drives"].get(key))
        for key in sorted(set(before["drives"]) | set(after["drives"]), key=_address)
    ]
    events += [
        (DRIVE_FAILED, k, _drive_location(k))
        for k, was, now in changed
        if now == "failed" and was != now
    ]
    events += [
        (DRIVE_INSERTED, k, _drive_location(k))
        for k, was, now in changed
        if was == "failed" and now != "failed"
    ]
    events += [
        (HOT_SPARE_IN_USE, k, _drive_location(k))
        for k, was, now in changed
        if now == "spare_in_use" and was != now
    ]
    for name in sorted(set(before["groups"]) | set(after["groups"])):
        was = before["groups"].get(name, {"state": "optimal"})
        now = after["groups"].get(name, {"state": "optimal"})
        where = f"Volume group {name}"
        if now["state"] != was["state"]:
            if now["state"] == "failed":
                events.append((GROUP_FAILED, name, where))
            elif now["state"] in ("degraded", "critical") and was["state"] == "optimal":
                events.append((GROUP_DEGRADED, name, where))
        for key, started, completed in (
            ("rebuild", RECONSTRUCTION_STARTED, RECONSTRUCTION_COMPLETED),
            ("copyback", COPYBACK_STARTED, COPYBACK_COMPLETED),
        ):
            if now.get(key) and now.get(key) != was.get(key):
                events.append((started, name, where))
            elif was.get(key) and not now.get(key) and _finished(array, name, key, was[key]):
                events.append((completed, name, where))
    return events


def _finished(array: dict, group_name: str, key: str, operation: list) -> bool:
    """An operation that left the group finished if its drive is now a member (it was not
    stopped by a failure or dropped by a repair)."""
    group = array["volume_groups"].get(group_name)
    if group is None:
        return False
    spare, other = operation
    member = spare if key == "rebuild" else other
    return member in group["drives"]


def _address(key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in key.split(","))


def _drive_location(key: str) -> str:
    tray, drawer, slot = key.split(",")
    return f"Tray {tray}, Drawer {drawer}, Slot {slot}"


def _append(log: dict, now: float, code: int, ident: str, location: str) -> None:
    log["events"].append([log["next"], round(now, 3), code, ident, location])
    log["next"] += 1
    del log["events"][:-CAPACITY]


def clear(array: dict) -> int:
    """Empty the array's log, as SMcli's `clear storageArray eventLog;` or a replaced
    controller leaves it: its numbers start again at 1. Returns how many events it dropped."""
    log = array.setdefault("mel", {"next": 1, "events": [], "seen": None, "gen": None})
    dropped = len(log["events"])
    log["events"] = []
    log["next"] = 1
    return dropped


def events(array: dict, start: int | None = None, count: int | None = None) -> list[list]:
    """The kept events with sequence numbers from `start` (all when None), oldest first, at
    most `count`: [sequence, time, code, component id, location]."""
    kept = array.get("mel", {}).get("events", [])
    chosen = [e for e in kept if start is None or e[0] >= start]
    return chosen[:count] if count is not None and count >= 0 else chosen
