"""The rules of a Lustre target: where it is mounted, its volume group, its fill."""

from __future__ import annotations

from portal.health.rules.arrays import VOLUME_GROUP_LEVELS, group_level
from portal.health.rules.facts import ServerFacts, TargetFacts, Thresholds
from portal.health.rules.nodes import GREY, ORANGE, RED, Node, threshold_high


def target_node(
    target: TargetFacts,
    servers: dict[str, ServerFacts],
    now: float,
    limits: Thresholds,
    drawers: set[str] | None = None,
) -> Node:
    """``drawers``: the failed drawers of its unit's arrays, named instead of their drives."""
    node = Node("target", target.label, summary={"kind": target.kind}, key=target.key)
    if target.served_by:
        node.summary["server"] = target.served_by
    if not target.in_service and not target.served_by:
        node.status = GREY
        node.reasons.append("not in service yet")
        return node
    if target.served_by is None:
        silent = [
            name
            for name in (target.primary, target.failover)
            if name in servers
            and (
                servers[name].last_seen is None
                or now - servers[name].last_seen > limits.sensor_silence_seconds
            )
        ]
        sentence = "not mounted on any server"
        if silent:
            sentence += f" (no report from {', '.join(silent)})"
        node.raise_to(RED, sentence)
    elif target.served_by == target.failover:
        primary = servers.get(target.primary)
        if primary is not None and primary.maintenance:
            # Moved on purpose: no "on its failover server" alert; a real fault still shows.
            node.raise_to(
                ORANGE,
                f"served by its failover server {target.failover} while its primary "
                f"{target.primary} is in maintenance",
            )
        else:
            node.summary["on_partner"] = True  # a structured flag for the alerts
            node.raise_to(
                ORANGE,
                f"served by its failover server {target.failover}, not its primary "
                f"{target.primary}",
            )
    elif target.served_by != target.primary:
        node.raise_to(
            ORANGE,
            f"mounted on {target.served_by}, which is neither its primary nor its failover server",
        )
    if target.volume_group is not None:
        level, sentence = group_level(target.volume_group, drawers)
        if level != "optimal":
            node.summary["volume_group"] = level  # a structured flag for the alerts
            node.raise_to(VOLUME_GROUP_LEVELS[level], sentence)
            if level in ("degraded", "critical"):
                node.summary["redundancy"] = [sentence]  # it serves, with less to lose
    fill = target.fill_percent
    if fill is not None:
        node.summary["fill_percent"] = round(fill, 1)
        if fill >= limits.capacity_warning_percent:
            node.summary["full"] = True  # a structured flag for the alerts
        threshold_high(
            node,
            fill,
            limits.capacity_warning_percent,
            limits.capacity_critical_percent,
            lambda level, limit: f"{fill:.1f} % full ({level} at {limit:g} %)",
        )
    return node
