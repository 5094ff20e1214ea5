"""The rules of a storage array and its volume groups and drives."""

from __future__ import annotations

from portal.health.rules.facts import (
    UNIT,
    ArrayCollectorFacts,
    ArrayFacts,
    DriveFacts,
    Thresholds,
    VolumeGroupFacts,
)
from portal.health.rules.nodes import (
    GREEN,
    GREY,
    ORANGE,
    RED,
    Node,
    duration,
    name_list,
    natural_key,
)

# Drive and volume-group state words that mean "lost" (the drive no longer holds data).
LOST_DRIVE_STATES = {"failed", "missing", "removed", "offline", "unresponsive", "bypassed"}
VOLUME_GROUP_LEVELS = {
    "optimal": GREEN,
    "degraded": ORANGE,
    "critical": RED,
    "failed": RED,
    "offline": RED,
}


def array_node(
    array: ArrayFacts,
    in_service: bool,
    now: float,
    limits: Thresholds,
    collector: ArrayCollectorFacts | None = None,
) -> Node:
    """``collector``: the array collector, for an array it reads (``array.collected``)."""
    node = Node("array", array.name, key=array.key)
    collector = collector if array.collected else None
    if array.last_seen is None:
        if not in_service:
            node.status = GREY
            node.reasons.append("not in service yet: no state reported")
        elif collector is not None:
            node.raise_to(
                ORANGE, f"its state is unknown: {collector_silence(collector, now, limits)}"
            )
        else:
            node.raise_to(ORANGE, "its state is unknown: no server's sensor reports it")
        return node
    if now - array.last_seen > limits.silent_after(array.interval):
        if collector is not None:
            silence = collector_silence(collector, now, limits, array.last_seen)
            node.raise_to(ORANGE, f"its state is unknown: {silence}")
            # The alerts' "Sensor silent": nobody else watches it (read through SMcli, its
            # servers' own silence is what is told).
            node.summary["silent"] = True
        else:
            node.raise_to(
                ORANGE,
                "its state is unknown: no server's sensor has reported it for "
                f"{duration(now - array.last_seen)}",
            )
    elif collector is not None:
        for sentence in collector_sentences(collector, now, limits):
            node.raise_to(ORANGE, sentence)
    # The redundant parts it lost, and the parts whose failure explains its groups' state
    # (structured flags for the alerts: a failed part mutes its targets' symptoms).
    redundancy: list[str] = []
    failed_parts: list[str] = []
    failed = sorted(name for name, state in array.controllers.items() if state != "optimal")
    working = sorted(name for name, state in array.controllers.items() if state == "optimal")
    failed_parts += [f"controller {name}" for name in failed]
    if failed and working:
        sentence = (
            f"controller {', '.join(failed)} {controller_state(array, failed)}: "
            f"controller {', '.join(working)} serves every volume"
        )
        node.raise_to(ORANGE, sentence)
        redundancy.append(sentence)
    elif failed:
        node.raise_to(RED, "no RAID controller is working: every volume is offline")
    management_sentence = unanswered_sentence(array)
    if management_sentence:
        node.raise_to(ORANGE, management_sentence)
        redundancy.append(management_sentence)
    for sentence in refused_sentences(array):
        node.raise_to(ORANGE, sentence)
    drawers = failed_drawers(array)
    for drawer, drives in drawers.items():
        # The groups it degraded; a group it failed says so itself, in red.
        groups = sorted(
            {
                g.name
                for g in array.volume_groups
                if set(map(id, g.lost_drives)) & set(drives) and group_level(g)[0] == "degraded"
            },
            key=natural_key,
        )
        sentence = drawer_sentence(drawer, list(drives.values()), groups)
        node.raise_to(ORANGE, sentence)
        redundancy.append(sentence)
        failed_parts.append(drawer)
    for group in array.volume_groups:
        level, sentence = group_level(group, set(drawers))
        if level == "optimal":
            continue
        if level == "degraded" and explained_by_drawers(group, set(drawers)):
            # The drawer's sentence names the group: said once, with its cause.
            node.raise_to(ORANGE)
            continue
        node.raise_to(VOLUME_GROUP_LEVELS.get(level, ORANGE), sentence)
    for spare in sorted(array.lost_spares, key=lambda d: natural_key(d.location)):
        state = spare.state.lower()
        sentence = (
            f"hot spare {spare.location} {'has failed' if state == 'failed' else f'is {state}'}"
        )
        node.raise_to(ORANGE, sentence)
        redundancy.append(sentence)
    if redundancy:
        node.summary["redundancy"] = redundancy
    if failed_parts:
        node.summary["failed_parts"] = failed_parts
    return node


def collector_silence(
    collector: ArrayCollectorFacts,
    now: float,
    limits: Thresholds,
    last_seen: float | None = None,
) -> str:
    """Why an array the array collector reads has no fresh state, with what to check: the
    collector itself silent, or its rounds coming without this array."""
    where = f"the array collector on {collector.server}"
    if collector.last_seen is None:
        said = f"{where} has never reported ({UNIT})"
        check = f"check that the {UNIT} service runs there and reaches InfluxDB"
    elif collector_silent(collector, now, limits):
        quiet = now - (last_seen if last_seen is not None else collector.last_seen)
        said = f"{where} has not reported it for {duration(quiet)} ({UNIT})"
        check = (
            f"check the {UNIT} service there (systemctl status {UNIT}; journalctl -u {UNIT}) "
            "and its way to InfluxDB"
        )
    else:
        since = f" for {duration(now - last_seen)}" if last_seen is not None else ""
        said = f"{where} has not reported this array{since}, though its rounds go on ({UNIT})"
        check = (
            "check the array's management addresses and monitor account in the inventory, "
            f"then run the sensor step; its log: journalctl -u {UNIT}"
        )
    return f"{said}: {check}"


def collector_silent(collector: ArrayCollectorFacts, now: float, limits: Thresholds) -> bool:
    """No round of the array collector for more than two of its intervals."""
    interval = collector.interval or limits.sensor_silence_seconds
    return collector.last_seen is None or now - collector.last_seen > 2 * interval


def collector_late(collector: ArrayCollectorFacts, now: float, limits: Thresholds) -> list[str]:
    """What is wrong with the array collector itself, from its own `sensor` points: silent for
    more than two of its intervals, or its run of the arrays late."""
    found = []
    if collector.last_seen is None:
        found.append("it has never reported")
    elif collector_silent(collector, now, limits):
        found.append(f"no round for {duration(now - collector.last_seen)}")
    if collector.late:
        took = (
            f" (its last run took {collector.run_seconds:.0f} s)" if collector.run_seconds else ""
        )
        found.append(f"its run of the arrays is {collector.late:.0f} s overdue{took}")
    return found


def collector_sentences(
    collector: ArrayCollectorFacts, now: float, limits: Thresholds
) -> list[str]:
    """The reasons an array the collector reads takes from the collector's own health."""
    return [
        f"the array collector on {collector.server} is behind: {late} ({UNIT}; check its log, "
        f"journalctl -u {UNIT}, and the arrays' answers)"
        for late in collector_late(collector, now, limits)
    ]


def collector_summary(collector: ArrayCollectorFacts, now: float, limits: Thresholds) -> dict:
    """The array collector's line for the dashboard (its filesystem's summary): where it runs,
    its newest round, its interval and what is behind; "N s ago" is the page's arithmetic, so
    the stored summary changes once a round, not every evaluation."""
    return {
        "server": collector.server,
        "unit": UNIT,
        "last_round": round(collector.last_seen) if collector.last_seen is not None else None,
        "interval": collector.interval,
        "behind": collector_late(collector, now, limits),
    }


def controller_state(array: ArrayFacts, failed: list[str]) -> str:
    """ "has failed", or the array's own word when it says more ("is offline")."""
    words = sorted({array.controllers[name].lower() for name in failed})
    if words == ["failed"]:
        return "has failed"
    return f"{'is' if len(failed) == 1 else 'are'} {' or '.join(words)}"


def drive_drawer(drive: DriveFacts) -> tuple[str, str] | None:
    """("drawer 3 of ssu01-b-e1", "slot 5") of a drive "ssu01-b-e1 drawer 3 slot 5"."""
    enclosure, _, rest = drive.location.partition(" drawer ")
    number, _, slot = rest.partition(" ")
    if not rest or not number:
        return None
    return f"drawer {number} of {enclosure}", slot


def failed_drawers(array: ArrayFacts) -> dict[str, dict[int, DriveFacts]]:
    """ "drawer 3 of ssu01-b-e1" -> its missing drives (by ``id``), for each drawer with two or
    more drives missing (the array lost the drawer; one missing drive is a drive pulled)."""
    missing: dict[str, dict[int, DriveFacts]] = {}
    lost = [d for g in array.volume_groups for d in g.lost_drives] + array.lost_spares
    for drive in lost:
        place = drive_drawer(drive)
        if drive.state.lower() == "missing" and place:
            missing.setdefault(place[0], {})[id(drive)] = drive
    return {
        drawer: drives
        for drawer, drives in sorted(missing.items(), key=lambda item: natural_key(item[0]))
        if len(drives) >= 2
    }


def slot_words(slots: list[str]) -> str:
    """ "slot 4", "slots 1-12", "slots 1, 3, 7-9" from ["slot 1", ...], in number order."""
    numbers = sorted({int(s.split()[-1]) for s in slots if s.split() and s.split()[-1].isdigit()})
    if not numbers:
        return ", ".join(slots)
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    parts = [f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs]
    return f"slot{'s' if len(numbers) > 1 else ''} {', '.join(parts)}"


def drawer_sentence(drawer: str, drives: list[DriveFacts], groups: list[str]) -> str:
    """One sentence for a failed drawer, its missing drives folded under it."""
    slots = slot_words([(drive_drawer(d) or ("", d.location))[1] for d in drives])
    sentence = f"{drawer} has failed: its {len(drives)} drives ({slots}) are missing"
    if groups:
        verb = "is" if len(groups) == 1 else "are"
        sentence += f"; volume group{'s' if len(groups) > 1 else ''} {name_list(groups)} {verb} "
        sentence += "degraded until the drawer is back"
    return sentence


def explained_by_drawers(group: VolumeGroupFacts, drawers: set[str]) -> bool:
    """Every drive the group lost is missing with a failed drawer."""
    return bool(group.lost_drives) and all(
        d.state.lower() == "missing" and (drive_drawer(d) or ("",))[0] in drawers
        for d in group.lost_drives
    )


def group_level(group: VolumeGroupFacts, drawers: set[str] | None = None) -> tuple[str, str]:
    """(optimal/degraded/critical/failed, a sentence naming the group and its lost drives).
    ``drawers``: the failed drawers of its array ("drawer 1 of ssu01-a-e0"), named instead of
    each of their missing drives."""
    if not group.lost_drives and (group.state or "optimal").lower() == "optimal":
        # As nearly every group of a rack is, every round (2,000 on a 100-SSU rack).
        return "optimal", f"volume group {group.name} is optimal"
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
    drives = _lost_words(group, drawers or set())
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
        rebuild = _rebuild_words(group)
        said = "; ".join(part for part in (drives, rebuild) if part)
        sentence += f": {said}" if said else " (the array names no lost drive)"
    else:
        sentence = f"volume group {group.name} is optimal"
    return level, sentence


def _lost_words(group: VolumeGroupFacts, drawers: set[str]) -> str:
    """ "drive ssu01-a-e0 drawer 1 slot 9 failed; drive ... slot 10 failed", slots in number
    order, the drives of a failed drawer said as the drawer."""
    words: list[str] = []
    folded: dict[str, list[str]] = {}
    for drive in sorted(group.lost_drives, key=lambda d: natural_key(d.location)):
        place = drive_drawer(drive)
        if place and place[0] in drawers and drive.state.lower() == "missing":
            folded.setdefault(place[0], []).append(place[1])
            continue
        words.append(f"drive {drive.location} {drive.state.lower()}")
    for drawer, slots in folded.items():
        words.append(f"{drawer} has failed, {slot_words(slots)} missing")
    return "; ".join(words)


def _rebuild_words(group: VolumeGroupFacts) -> str:
    """ "reconstructing onto drive ssu01-a-e0 drawer 1 slot 3, 42 % done" as the array says."""
    onto = ", ".join(
        f"drive {d.location}"
        for d in sorted(group.rebuilding_drives, key=lambda d: natural_key(d.location))
    )
    if group.operation:
        words = {"reconstruction": "reconstructing", "copyback": "copying back"}
        doing = words.get(group.operation.lower(), group.operation.lower())
        sentence = f"{doing} onto {onto}" if onto else doing
        if group.progress is not None:
            sentence += f", {group.progress} % done"
        return sentence
    if onto:
        # A new drive in the slot and nothing writes onto it yet.
        return f"{onto} replaced, waiting for its reconstruction"
    return ""


def unanswered_sentence(array: ArrayFacts) -> str:
    """A working controller that did not answer the array collector on its management address:
    the array is watched through its partner alone (a failed controller says so itself)."""
    silent = sorted(c for c in array.unanswered if array.controllers.get(c, "optimal") == "optimal")
    if not silent:
        return ""
    if array.answered:
        return (
            f"controller {', '.join(silent)} does not answer on its management address: the "
            f"array is watched through controller {', '.join(array.answered)} alone (check "
            "the controller's management port and its network)"
        )
    return (
        f"controller {', '.join(silent)} does not answer on its management address: nothing "
        "watches the array (check the controllers' management ports and their network)"
    )


# What the array collector was refused, in what an administrator does about it.
REFUSALS = {
    "account": "refused the monitor account: check its user and password (Inventory → Storage "
    "arrays in the admin)",
    "certificate": "presents a certificate other than the one pinned at provisioning, so it is "
    "not asked (if it was replaced on purpose, clear the pin in Inventory → Storage arrays and "
    "run the sensor step)",
}


def refused_sentences(array: ArrayFacts) -> list[str]:
    return [
        f"controller {controller} {REFUSALS.get(reason, f'refused the array collector ({reason})')}"
        for controller, reason in sorted(array.refused.items())
    ]
