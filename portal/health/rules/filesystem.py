"""The rules of the whole: a filesystem (its lost OSTs, its capacity and the spread of its OSTs'
fill), its SSUs and pairs, put together from the rules of each object kind."""

from __future__ import annotations

from metrics import quantities
from portal.health.rules.arrays import (
    array_node,
    collector_summary,
    explained_by_drawers,
    failed_drawers,
    group_level,
)
from portal.health.rules.facts import (
    FilesystemFacts,
    PairFacts,
    RackFacts,
    TargetFacts,
    Thresholds,
    UnitFacts,
)
from portal.health.rules.nodes import (
    GREEN,
    GREY,
    ORANGE,
    RED,
    Node,
    apply_mark,
    it_them,
    limit_reasons,
    name_list,
    take_children,
    threshold_high,
)
from portal.health.rules.servers import server_node
from portal.health.rules.targets import target_node


def evaluate(facts: RackFacts) -> list[Node]:
    """One tree per filesystem."""
    return [_filesystem(fs, facts) for fs in facts.filesystems]


def _filesystem(fs: FilesystemFacts, facts: RackFacts) -> Node:
    node = Node("filesystem", fs.name, key=fs.key)
    node.children = [_unit(unit, facts) for unit in fs.units]
    targets = [t for unit in fs.units for t in unit.targets if t.kind == "OST"]
    lost = [
        t.label
        for t in targets
        if t.in_service and t.volume_group and group_level(t.volume_group)[0] == "failed"
    ]
    if lost:
        node.raise_to(RED, f"{name_list(lost)} lost: data striped over {it_them(lost)} is gone")
    _filesystem_capacity(node, targets, facts.thresholds)
    collector = facts.array_collector
    if collector is not None and any(a.collected for unit in fs.units for a in unit.arrays):
        node.summary["array_collector"] = collector_summary(collector, facts.now, facts.thresholds)
    take_children(node)
    return node


def _filesystem_capacity(node: Node, osts: list[TargetFacts], limits: Thresholds) -> None:
    filled = [(t.label, t.fill_percent) for t in osts if t.fill_percent is not None]
    spaces = [t.space_kb for t in osts if t.fill_percent is not None]
    used = sum(space[0] for space in spaces)
    avail = sum(space[1] for space in spaces)
    percent = quantities.fill_percent(used, avail)
    if percent is not None:
        node.summary.update(fill_percent=round(percent, 1), kbytes_used=used, kbytes_avail=avail)
        threshold_high(
            node,
            percent,
            limits.capacity_warning_percent,
            limits.capacity_critical_percent,
            lambda level, limit: f"filesystem {percent:.1f} % full ({level} at {limit:g} %)",
        )
    if len(filled) >= 2:
        fullest = max(filled, key=lambda item: item[1])
        emptiest = min(filled, key=lambda item: item[1])
        spread = fullest[1] - emptiest[1]
        node.summary["fill_spread_percent"] = round(spread, 1)
        threshold_high(
            node,
            spread,
            limits.ost_fill_spread_warning_percent,
            limits.ost_fill_spread_critical_percent,
            lambda level, limit: (
                f"OST fill differs by {spread:.1f} points ({fullest[0]} {fullest[1]:.1f} %, "
                f"{emptiest[0]} {emptiest[1]:.1f} %; {level} at {limit:g} points): Lustre stops "
                "allocating round-robin"
            ),
        )


def _unit(unit: UnitFacts, facts: RackFacts) -> Node:
    limits = facts.thresholds
    now = facts.now
    servers = {server.hostname: server for server in unit.pair.servers}
    in_service = any(t.in_service or t.served_by for t in unit.targets)
    server_nodes = [
        server_node(server, unit, servers, in_service, now, limits) for server in servers.values()
    ]
    arrays = [
        array_node(array, in_service, now, limits, facts.array_collector) for array in unit.arrays
    ]
    drawers = {drawer for array in unit.arrays for drawer in failed_drawers(array)}
    targets = [target_node(target, servers, now, limits, drawers) for target in unit.targets]
    # What a job moves or builds shows the job, before the pair and the SSU take the colours.
    for child in (*server_nodes, *arrays, *targets):
        mark = facts.marks.get(child.key) or facts.marks.get(unit.pair.key)
        if mark is not None:
            apply_mark(child, mark)
    pair = _pair(unit.pair, server_nodes)
    # A target whose only fault is a failed drawer's: its array says it once, naming it.
    by_drawer = {
        id(child)
        for child, target in zip(targets, unit.targets, strict=True)
        if target.volume_group is not None
        and explained_by_drawers(target.volume_group, drawers)
        and child.status == ORANGE
        and len(child.reasons) == 1
    }
    if unit.kind == "pair":
        pair.children += arrays + targets
        take_children(pair, skip={id(child) for child in server_nodes} | by_drawer)
        return pair
    node = Node("ssu", unit.name, children=[pair, *arrays, *targets], key=unit.key)
    take_children(node, skip=by_drawer)
    return node


def _pair(pair: PairFacts, server_nodes: list[Node]) -> Node:
    """A pair serves while one server does: one server red makes the pair orange, not red."""
    node = Node("pair", pair.name, children=list(server_nodes), key=pair.key)
    statuses = [child.status for child in server_nodes]
    serving = [child for child in server_nodes if child.status in (GREEN, ORANGE)]
    # A server its partner cannot fence makes the pair red: it could not fail over.
    unfenceable = [child for child in server_nodes if _unfenceable(child)]
    for child in server_nodes:
        if child.status == GREY:
            continue
        if child.status == RED and serving and child not in unfenceable:
            others = ", ".join(other.name for other in serving)
            node.raise_to(ORANGE, f"{child.name} is not serving; {others} carries the pair")
            node.reasons += [f"{child.name}: {reason}" for reason in child.reasons]
        elif child.status != GREEN:
            node.raise_to(child.status)
            node.reasons += [f"{child.name}: {reason}" for reason in child.reasons]
    if server_nodes and all(status == RED for status in statuses):
        if any(not child.summary.get("down") for child in unfenceable):
            node.raise_to(RED)  # they serve, but neither can be fenced: their reasons say so
        else:
            node.raise_to(RED, "no server of the pair is working")
    if all(status == GREY for status in statuses):
        node.status = GREY
    private = _private_network_down(pair, server_nodes)
    if private:
        node.raise_to(RED)
        node.reasons.insert(0, private)
    node.reasons = limit_reasons(node.reasons)
    return node


def _private_network_down(pair: PairFacts, server_nodes: list[Node]) -> str | None:
    """Both servers report, yet neither reaches the other's heartbeat, BMC or PDU: what they
    share is the pair's private network (its switch), the one cause to name first."""
    servers = pair.servers
    if len(servers) < 2 or any(child.summary.get("silent") for child in server_nodes):
        return None
    if not all(s.heartbeat_up is False and s.power_answered is False for s in servers):
        return None
    if any(s.pdu_answered for s in servers):
        return None
    polled = any(s.pdu_answered is False for s in servers)
    return (
        "its private network is down (the pair's switch for the heartbeat, the BMCs and the "
        "PDUs): the heartbeat (corosync ring) is down and neither server reaches the other's "
        f"BMC{' or PDU' if polled else ''}, so neither can be fenced"
    )


def _unfenceable(server: Node) -> bool:
    levels = server.summary.get("fencing_levels") or {}
    return bool(levels) and all(level is False for level in levels.values())
