"""The rules of a storage array and its volume groups and drives."""

from __future__ import annotations

from portal.health.rules.facts import ArrayFacts, Thresholds, VolumeGroupFacts
from portal.health.rules.nodes import GREEN, GREY, ORANGE, RED, Node, duration

# Drive and volume-group state words that mean "lost" (the drive no longer holds data).
LOST_DRIVE_STATES = {"failed", "missing", "removed", "offline", "unresponsive", "bypassed"}
VOLUME_GROUP_LEVELS = {
    "optimal": GREEN,
    "degraded": ORANGE,
    "critical": RED,
    "failed": RED,
    "offline": RED,
}


def array_node(array: ArrayFacts, in_service: bool, now: float, limits: Thresholds) -> Node:
    node = Node("array", array.name, key=array.key)
    if array.last_seen is None:
        if not in_service:
            node.status = GREY
            node.reasons.append("not in service yet: no state reported")
        else:
            node.raise_to(ORANGE, "its state is unknown: no sensor reports it")
        return node
    if now - array.last_seen > limits.sensor_silence_seconds:
        node.raise_to(
            ORANGE,
            f"its state is unknown: last reported {duration(now - array.last_seen)} ago",
        )
    # The redundant parts it lost, and the parts whose failure explains its groups' state
    # (structured flags for the alerts: a failed part mutes its targets' symptoms).
    redundancy: list[str] = []
    failed_parts: list[str] = []
    failed = sorted(name for name, state in array.controllers.items() if state != "optimal")
    working = sorted(name for name, state in array.controllers.items() if state == "optimal")
    failed_parts += [f"controller {name}" for name in failed]
    if failed and working:
        sentence = (
            f"controller {', '.join(failed)} has failed "
            f"({', '.join(array.controllers[c] for c in failed)}): "
            f"controller {', '.join(working)} serves every volume"
        )
        node.raise_to(ORANGE, sentence)
        redundancy.append(sentence)
    elif failed:
        node.raise_to(RED, "no RAID controller is working: every volume is offline")
    for drawer, count in failed_drawers(array).items():
        sentence = (
            f"{drawer} has failed: its {count} drives are missing; every volume group with "
            "a drive there is degraded"
        )
        node.raise_to(ORANGE, sentence)
        redundancy.append(sentence)
        failed_parts.append(drawer)
    for group in array.volume_groups:
        level, sentence = group_level(group)
        if level != "optimal":
            node.raise_to(VOLUME_GROUP_LEVELS.get(level, ORANGE), sentence)
    for spare in array.lost_spares:
        sentence = f"hot spare {spare.location} is {spare.state}"
        node.raise_to(ORANGE, sentence)
        redundancy.append(sentence)
    if redundancy:
        node.summary["redundancy"] = redundancy
    if failed_parts:
        node.summary["failed_parts"] = failed_parts
    return node


def failed_drawers(array: ArrayFacts) -> dict[str, int]:
    """ "drawer 3 of ssu01-b-e1" -> its missing drives, for each drawer with two or more
    drives missing (the array lost the drawer; one missing drive is a drive pulled)."""
    missing: dict[str, int] = {}
    lost = [d for g in array.volume_groups for d in g.lost_drives] + array.lost_spares
    for drive in lost:
        enclosure, _, rest = drive.location.partition(" drawer ")
        number = rest.split(" ", 1)[0]
        if drive.state.lower() == "missing" and rest:
            key = f"drawer {number} of {enclosure}"
            missing[key] = missing.get(key, 0) + 1
    return {drawer: count for drawer, count in sorted(missing.items()) if count >= 2}


def group_level(group: VolumeGroupFacts) -> tuple[str, str]:
    """(optimal/degraded/critical/failed, a sentence naming the group and its lost drives)."""
    # As the arrays count: drives missing with their drawer come back when it is pushed in, so
    # only failed drives make a group critical; any loss beyond the redundancy fails it.
    lost = len(group.lost_drives)
    failed = sum(1 for drive in group.lost_drives if "fail" in drive.state.lower())
    if lost > group.redundancy:
        by_drives = "failed"
    elif failed and failed >= group.redundancy:
        by_drives = "critical"
    elif lost:
        by_drives = "degraded"
    else:
        by_drives = "optimal"
    reported = (group.state or "optimal").lower()
    if reported not in VOLUME_GROUP_LEVELS:
        reported = "degraded"  # a state word we do not know is not "as designed"
    order = ["optimal", "degraded", "critical", "failed"]
    level = max(by_drives, "failed" if reported == "offline" else reported, key=order.index)
    drives = "; ".join(f"drive {d.location} {d.state}" for d in group.lost_drives)
    if level == "failed":
        sentence = f"volume group {group.name} has failed"
        sentence += f" ({drives})" if drives else ""
        sentence += ": the target on it is lost"
    elif level == "critical":
        sentence = f"volume group {group.name} is critical"
        sentence += f" ({drives})" if drives else ""
        sentence += ": no redundancy left"
    elif level == "degraded":
        sentence = f"volume group {group.name} is degraded"
        sentence += f": {drives}" if drives else " (rebuilding or a drive missing)"
    else:
        sentence = f"volume group {group.name} is optimal"
    return level, sentence
