"""The pcs script and the CIB XML describe the same cluster.

The script is run for real: bash, with every `pcs -f` command editing a CIB file that starts as
`cibadmin --empty`. The result is compared with build_cib()'s XML by meaning (agents,
parameters, operation intervals and timeouts, constraints with scores, nodes and rules, fencing
levels, properties, resource defaults), since pcs chooses its own element ids.

pcs needs about a second per command on this machine, so the OSS pair here keeps two of the
24 OSTs of the fixture: one per server, with hex letters in their labels (OST000a, OST000b).
Every OST becomes the same three commands, so the other 22 add time, not coverage. Both
scripts run at the same time.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from provisioning.ha import build_cib, build_pcs_script, simulate, verify
from provisioning.ha.describe import describe_cib

pytestmark = pytest.mark.rack(seconds=50)

PLANS = Path(__file__).parent / "plans"
KEPT_OSTS = ("scratch-OST000a", "scratch-OST000b")


def load_plan(name: str) -> dict:
    return json.loads((PLANS / name).read_text())


def oss_plan() -> dict:
    plan = load_plan("oss_pair_24_osts.json")
    plan["targets"] = [target for target in plan["targets"] if target["label"] in KEPT_OSTS]
    return plan


@pytest.fixture(scope="module")
def plans() -> dict[str, dict]:
    return {"oss": oss_plan(), "mds": load_plan("mds_pair.json")}


@pytest.fixture(scope="module")
def pcs_cibs(plans) -> dict[str, str]:
    """Run both pcs scripts (concurrently) on empty CIBs; return the resulting CIBs."""
    with tempfile.TemporaryDirectory() as workdir:
        running = {}
        for role, plan in plans.items():
            script = Path(workdir) / f"{role}.sh"
            cib = Path(workdir) / f"{role}.xml"
            script.write_text(build_pcs_script(plan))
            empty = subprocess.run(
                ["cibadmin", "--empty"], check=True, capture_output=True, text=True
            )
            cib.write_text(empty.stdout)
            running[role] = (
                cib,
                subprocess.Popen(
                    ["bash", str(script)],
                    env={**os.environ, "CIB": str(cib)},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                ),
            )
        results = {}
        for role, (cib, process) in running.items():
            output, _ = process.communicate(timeout=600)
            assert process.returncode == 0, output
            results[role] = cib.read_text()
    return results


@pytest.mark.parametrize("role", ["oss", "mds"])
def test_pcs_script_builds_the_same_cluster_as_the_xml(role, plans, pcs_cibs):
    from_xml = describe_cib(build_cib(plans[role])).without_nodes()
    from_pcs = describe_cib(pcs_cibs[role])
    differences = {
        field: (getattr(from_xml, field) ^ getattr(from_pcs, field))
        for field in from_xml.__dataclass_fields__
        if getattr(from_xml, field) != getattr(from_pcs, field)
    }
    assert differences == {}


@pytest.mark.parametrize("role", ["oss", "mds"])
def test_pcs_script_really_configured_the_cluster(role, plans, pcs_cibs):
    # Guards the comparison above against two empty descriptions being equal.
    described = describe_cib(pcs_cibs[role])
    targets = len(plans[role]["targets"])
    assert len(described.resources) == 4 + targets + 2
    assert len(described.fencing_levels) == 4
    assert len(described.rule_locations) == targets
    assert len(described.node_locations) == 4 + 2 * targets
    assert ("stonith-enabled", "true") in described.properties


def test_mds_pcs_script_orders_the_mgs_before_the_mdt(pcs_cibs):
    orders = describe_cib(pcs_cibs["mds"]).orders
    assert ("MGS", "start", "scratch-MDT0000", "start", "Optional") in orders


def test_pcs_built_cluster_fails_over_like_the_xml(plans, pcs_cibs):
    # Nodes join a live cluster by themselves; an offline pcs file has none, so add them.
    root = ET.fromstring(pcs_cibs["oss"])
    nodes = root.find("./configuration/nodes")
    for number, server in enumerate(plans["oss"]["servers"], start=1):
        ET.SubElement(nodes, "node", id=str(number), uname=server["hostname"])
    from_pcs = simulate(ET.tostring(root, encoding="unicode"))
    assert verify(from_pcs.cib_xml).ok
    assert from_pcs.placements == simulate(build_cib(plans["oss"])).placements
    assert from_pcs.placements == {"scratch-OST000a": "oss01", "scratch-OST000b": "oss02"}
