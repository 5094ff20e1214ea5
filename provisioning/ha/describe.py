"""What a CIB configures, with the ids and the spelling left out.

Two CIBs that describe the same cluster (one from build_cib(), one made by pcs, or the live
cluster's and the plan's) give equal descriptions even though their element ids, attribute
order and duration spelling ("20s", "20", "20000ms") differ. Used to prove the pcs script and
the XML agree, and to tell whether a running cluster still matches its plan.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

_DURATION_RE = re.compile(r"^\s*([0-9]+)\s*(ms|msec|s|sec|m|min|h|hr|)\s*$")
_SECONDS = {
    "ms": 0.001,
    "msec": 0.001,
    "s": 1,
    "sec": 1,
    "": 1,
    "m": 60,
    "min": 60,
    "h": 3600,
    "hr": 3600,
}


def seconds(duration: str | None) -> float | None:
    """'20s', '20', '20000ms', '1m' → seconds; None stays None."""
    if duration is None:
        return None
    match = _DURATION_RE.match(duration)
    if not match:
        raise ValueError(f"not a duration: {duration!r}")
    return int(match.group(1)) * _SECONDS[match.group(2)]


def _score(value: str | None) -> str | None:
    if value in ("INFINITY", "+INFINITY", "infinity", "+infinity"):
        return "INFINITY"
    if value in ("-infinity",):
        return "-INFINITY"
    return value


def _pairs(element: ET.Element | None, path: str) -> dict[str, str]:
    if element is None:
        return {}
    return {nv.get("name", ""): nv.get("value", "") for nv in element.iterfind(path)}


@dataclass(frozen=True)
class Resource:
    agent: str  # class:provider:type, or stonith:type
    params: frozenset[tuple[str, str]]
    ops: frozenset[tuple[str, float | None, float | None]]  # name, interval s, timeout s
    meta: frozenset[tuple[str, str]]
    clone: str | None


@dataclass(frozen=True)
class ClusterDescription:
    properties: frozenset[tuple[str, str]]
    resource_defaults: frozenset[tuple[str, str]]
    resources: frozenset[tuple[str, Resource]]
    node_locations: frozenset[tuple[str, str, str]]  # resource, node, score
    # resource, score, boolean-op, expressions (attribute, operation, value, type)
    rule_locations: frozenset[tuple[str, str, str, frozenset[tuple[str, ...]]]]
    orders: frozenset[tuple[str, str, str, str, str]]  # first, action, then, action, kind
    colocations: frozenset[tuple[str, str, str]]  # resource, with, score
    fencing_levels: frozenset[tuple[str, int, str]]  # node, index, devices
    nodes: frozenset[str]

    def without_nodes(self) -> ClusterDescription:
        """pcs cannot add nodes to an offline CIB: the cluster adds them when they join."""
        return replace(self, nodes=frozenset())

    def resource(self, resource_id: str) -> Resource:
        return dict(self.resources)[resource_id]


def _resource(primitive: ET.Element, clone: str | None) -> Resource:
    standard = primitive.get("class", "")
    provider = primitive.get("provider")
    agent = ":".join(part for part in (standard, provider, primitive.get("type", "")) if part)
    ops = frozenset(
        (op.get("name", ""), seconds(op.get("interval", "0")), seconds(op.get("timeout")))
        for op in primitive.iterfind("./operations/op")
    )
    return Resource(
        agent=agent,
        params=frozenset(_pairs(primitive, "./instance_attributes/nvpair").items()),
        ops=ops,
        meta=frozenset(_pairs(primitive, "./meta_attributes/nvpair").items()),
        clone=clone,
    )


def describe_cib(cib_xml: str) -> ClusterDescription:
    root = ET.fromstring(cib_xml)
    configuration = root.find("./configuration")
    if configuration is None:
        raise ValueError("not a CIB: no <configuration>")

    properties = _pairs(configuration, "./crm_config/cluster_property_set/nvpair")
    resource_defaults = _pairs(configuration, "./rsc_defaults/meta_attributes/nvpair")

    resources: list[tuple[str, Resource]] = []
    for primitive in configuration.iterfind("./resources/primitive"):
        resources.append((primitive.get("id", ""), _resource(primitive, None)))
    for clone in configuration.iterfind("./resources/clone"):
        for primitive in clone.iterfind("./primitive"):
            resources.append((primitive.get("id", ""), _resource(primitive, clone.get("id"))))

    node_locations = set()
    rule_locations = set()
    for location in configuration.iterfind("./constraints/rsc_location"):
        resource = location.get("rsc", "")
        if location.get("node"):
            node_locations.add(
                (resource, location.get("node", ""), _score(location.get("score")) or "")
            )
        for rule in location.iterfind("./rule"):
            expressions = frozenset(
                (
                    expression.get("attribute", ""),
                    expression.get("operation", ""),
                    expression.get("value", ""),
                    expression.get("type", ""),
                )
                for expression in rule.iterfind("./expression")
            )
            rule_locations.add(
                (
                    resource,
                    _score(rule.get("score")) or "",
                    rule.get("boolean-op", "and"),
                    expressions,
                )
            )

    orders = frozenset(
        (
            order.get("first", ""),
            order.get("first-action", "start"),
            order.get("then", ""),
            order.get("then-action", order.get("first-action", "start")),
            order.get("kind", "Mandatory"),
        )
        for order in configuration.iterfind("./constraints/rsc_order")
    )
    colocations = frozenset(
        (
            colocation.get("rsc", ""),
            colocation.get("with-rsc", ""),
            _score(colocation.get("score")) or "",
        )
        for colocation in configuration.iterfind("./constraints/rsc_colocation")
    )
    fencing_levels = frozenset(
        (level.get("target", ""), int(level.get("index", "0")), level.get("devices", ""))
        for level in configuration.iterfind("./fencing-topology/fencing-level")
    )
    nodes = frozenset(node.get("uname", "") for node in configuration.iterfind("./nodes/node"))
    return ClusterDescription(
        properties=frozenset(properties.items()),
        resource_defaults=frozenset(resource_defaults.items()),
        resources=frozenset(resources),
        node_locations=frozenset(node_locations),
        rule_locations=frozenset(rule_locations),
        orders=orders,
        colocations=colocations,
        fencing_levels=fencing_levels,
        nodes=nodes,
    )
