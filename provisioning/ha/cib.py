"""The pair's Pacemaker configuration as a CIB XML document (what `cibadmin --replace` takes).

The document carries no crm_feature_set: the cluster fills it in, and a value newer than the
local tools know makes crm_simulate abort (shared/COMPONENTS.md).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from provisioning.ha.cluster import Clone, Op, PairCluster, Primitive, pair_cluster
from provisioning.ha.plan import read_plan

SCHEMA = "pacemaker-3.5"


def _nvset(parent: ET.Element, tag: str, set_id: str, pairs: Iterable[tuple[str, str]]) -> None:
    nvset = ET.SubElement(parent, tag, id=set_id)
    for name, value in pairs:
        ET.SubElement(nvset, "nvpair", id=f"{set_id}-{name}", name=name, value=value)


def _op_id(resource_id: str, op: Op) -> str:
    return f"{resource_id}-{op.name}-interval-{op.interval}"


def _primitive(parent: ET.Element, primitive: Primitive) -> None:
    attributes = {"id": primitive.id, "class": primitive.standard, "type": primitive.agent}
    if primitive.provider:
        attributes["provider"] = primitive.provider
    element = ET.SubElement(parent, "primitive", attributes)
    _nvset(element, "instance_attributes", f"{primitive.id}-instance_attributes", primitive.params)
    operations = ET.SubElement(element, "operations")
    for op in primitive.ops:
        op_attributes = {"id": _op_id(primitive.id, op), "name": op.name, "interval": op.interval}
        if op.timeout:
            op_attributes["timeout"] = op.timeout
        ET.SubElement(operations, "op", op_attributes)


def _clone(parent: ET.Element, clone: Clone) -> None:
    element = ET.SubElement(parent, "clone", id=clone.id)
    _primitive(element, clone.primitive)


def _constraints(parent: ET.Element, cluster: PairCluster) -> None:
    constraints = ET.SubElement(parent, "constraints")
    for score in cluster.node_scores:
        ET.SubElement(
            constraints,
            "rsc_location",
            id=score.id,
            rsc=score.resource,
            node=score.node,
            score=score.score,
        )
    for health in cluster.health_rules:
        location = ET.SubElement(constraints, "rsc_location", id=health.id, rsc=health.resource)
        rule = ET.SubElement(
            location, "rule", {"id": f"{health.id}-rule", "score": "-INFINITY", "boolean-op": "or"}
        )
        for attribute in health.attributes:
            ET.SubElement(
                rule,
                "expression",
                id=f"{health.id}-{attribute}-undefined",
                attribute=attribute,
                operation="not_defined",
            )
            ET.SubElement(
                rule,
                "expression",
                id=f"{health.id}-{attribute}-zero",
                attribute=attribute,
                operation="lte",
                value="0",
                type="number",
            )
    for order in cluster.orders:
        ET.SubElement(
            constraints,
            "rsc_order",
            {
                "id": order.id,
                "first": order.first,
                "first-action": "start",
                "then": order.then,
                "then-action": "start",
                "kind": order.kind,
            },
        )
    for colocation in cluster.colocations:
        ET.SubElement(
            constraints,
            "rsc_colocation",
            {
                "id": colocation.id,
                "rsc": colocation.resource,
                "with-rsc": colocation.with_resource,
                "score": colocation.score,
            },
        )


def cluster_to_cib(cluster: PairCluster) -> str:
    cib = ET.Element(
        "cib", {"validate-with": SCHEMA, "epoch": "1", "num_updates": "0", "admin_epoch": "0"}
    )
    configuration = ET.SubElement(cib, "configuration")
    crm_config = ET.SubElement(configuration, "crm_config")
    _nvset(crm_config, "cluster_property_set", "cib-bootstrap-options", cluster.properties)

    nodes = ET.SubElement(configuration, "nodes")
    # Corosync numbers the nodes of `pcs cluster setup NAME first second` as 1 and 2.
    for number, hostname in enumerate(cluster.nodes, start=1):
        ET.SubElement(nodes, "node", id=str(number), uname=hostname)

    resources = ET.SubElement(configuration, "resources")
    for primitive in (*cluster.fence_devices, *cluster.targets):
        _primitive(resources, primitive)
    for clone in cluster.health_clones:
        _clone(resources, clone)

    _constraints(configuration, cluster)

    topology = ET.SubElement(configuration, "fencing-topology")
    for level in cluster.fencing_levels:
        ET.SubElement(
            topology,
            "fencing-level",
            id=level.id,
            target=level.node,
            index=str(level.index),
            devices=level.device,
        )

    defaults = ET.SubElement(configuration, "rsc_defaults")
    _nvset(defaults, "meta_attributes", "rsc-defaults", cluster.resource_defaults)

    ET.SubElement(cib, "status")
    ET.indent(cib)
    return ET.tostring(cib, encoding="unicode") + "\n"


def build_cib(plan: Mapping[str, Any], fence_credentials: Any = None) -> str:
    """The pair's whole Pacemaker configuration as CIB XML; raise HAConfigError on a bad plan.

    `fence_credentials` (a FenceCredentials or a dict of its fields) names the fence users and
    the secret script; passwords are refused, and fencing cannot be turned off.
    """
    return cluster_to_cib(pair_cluster(read_plan(plan), fence_credentials))


def first_push(cib_xml: str) -> dict[str, Any]:
    """What a cluster that does not run the targets yet is given first: the same configuration
    with every Lustre target unmanaged (`is-managed=false`: Pacemaker neither starts nor stops
    it, but its probes find where the mount step mounted it), and the node attributes its
    health agents set (healthLNET's and healthLUSTRE's `name`).

    Pushed whole, the targets would be stopped (a target may only run where both attributes
    are defined, and none is yet), then started on whichever server's health agents answered
    first, and stick there (stickiness 1000 against a preference of 20 over 10). Measured on
    the real Pacemaker 2.1.5: the whole MDS pair ended on mds02, and an MGS stopped under the
    OSTs of an SSU starting at the same time. ha.yml pushes this, waits until every server has
    its attributes, then pushes `cib_xml` itself: each target stays where it runs, or starts
    where it prefers.
    """
    root = ET.fromstring(cib_xml)
    attributes: list[str] = []
    for primitive in root.iter("primitive"):
        if (primitive.get("provider"), primitive.get("type")) == ("lustre", "Lustre"):
            _nvset(
                primitive,
                "meta_attributes",
                f"{primitive.get('id')}-first",
                [("is-managed", "false")],
            )
        elif primitive.get("provider") == "lustre":  # healthLNET, healthLUSTRE
            names = primitive.findall("instance_attributes/nvpair[@name='name']")
            attributes.extend(n.get("value") for n in names if n.get("value"))
    ET.indent(root)
    return {
        "cib": ET.tostring(root, encoding="unicode") + "\n",
        "attributes": sorted(set(attributes)),
    }
