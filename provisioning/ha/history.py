"""A resource's failures in a CIB's status, and their clean-up (``crm_resource --cleanup``).

A start that failed on a node leaves a fail count there (``fail-count-<rsc>#start_0``,
INFINITY) and a ``<rsc>_last_failure_0`` entry in the node's resource history: Pacemaker will
not run the resource on that node again until an operator cleans it up, even once the cause
(a failed volume group, a lost SAS path) is repaired. The clean-up erases the resource's
history and fail counts on the nodes where it failed, so the controller probes it there again.

With ``CIB_file`` set, ``crm_resource --cleanup`` only says what it would do (there is no
controller to ask); the what-if (provisioning.ha.operator) and the virtual rack make the same
edit to their CIB file here.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET


def _is_failure_attribute(name: str, resource: str) -> bool:
    # fail-count-<rsc>#<op>_<interval> (Pacemaker ≥ 1.1.17), fail-count-<rsc> (before), and
    # the matching last-failure-* stamps.
    return any(
        name == f"{prefix}-{resource}" or name.startswith(f"{prefix}-{resource}#")
        for prefix in ("fail-count", "last-failure")
    )


def failed_nodes(root: ET.Element, resource: str) -> list[str]:
    """The nodes where ``resource`` has failed and not been cleaned up."""
    nodes = []
    for state in root.iterfind("./status/node_state"):
        counts = [
            nv
            for nv in state.iterfind("./transient_attributes/instance_attributes/nvpair")
            if _is_failure_attribute(nv.get("name", ""), resource)
            and nv.get("name", "").startswith("fail-count")
        ]
        last_failure = state.find(
            f"./lrm/lrm_resources/lrm_resource[@id='{resource}']"
            f"/lrm_rsc_op[@id='{resource}_last_failure_0']"
        )
        if counts or last_failure is not None:
            nodes.append(state.get("uname", ""))
    return nodes


def clean_up(root: ET.Element, resource: str, node: str | None = None) -> list[str]:
    """Erase ``resource``'s history and fail counts where it failed (on ``node`` only, when
    given); the nodes cleaned."""
    nodes = [n for n in failed_nodes(root, resource) if node is None or n == node]
    for state in root.iterfind("./status/node_state"):
        if state.get("uname") not in nodes:
            continue
        for resources in state.iterfind("./lrm/lrm_resources"):
            for entry in resources.findall(f"./lrm_resource[@id='{resource}']"):
                resources.remove(entry)
        for attributes in state.iterfind("./transient_attributes/instance_attributes"):
            for nv in attributes.findall("./nvpair"):
                if _is_failure_attribute(nv.get("name", ""), resource):
                    attributes.remove(nv)
    return nodes


def failed_resources(root: ET.Element) -> list[str]:
    """Every resource with a failure on some node."""
    found = {
        entry.get("id", "")
        for entry in root.iterfind("./status/node_state/lrm/lrm_resources/lrm_resource")
    }
    for nv in root.iterfind("./status/node_state/transient_attributes/instance_attributes/nvpair"):
        name = nv.get("name", "")
        if name.startswith("fail-count-"):
            found.add(name.removeprefix("fail-count-").split("#", 1)[0])
    return sorted(r for r in found if failed_nodes(root, r))


def clean_up_file(path, resource: str, node: str | None = None) -> list[str]:
    """``clean_up`` on a CIB file, written back only when something was cleaned."""
    tree = ET.parse(path)
    nodes = clean_up(tree.getroot(), resource, node)
    if nodes:
        tree.write(path, encoding="unicode")
    return nodes
