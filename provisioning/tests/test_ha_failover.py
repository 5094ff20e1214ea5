"""Failover of an OSS and an MDS pair, decided by Pacemaker's own scheduler (crm_simulate).

Every test runs the real crm_simulate on the configuration build_cib() writes; nothing here
re-implements Pacemaker's placement rules.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from provisioning.ha import (
    LnetHealthy,
    LnetUnhealthy,
    LustreUnhealthy,
    MonitorFails,
    NodeLost,
    NodeReturns,
    build_cib,
    first_push,
    simulate,
    verify,
)
from provisioning.ha.simulate import node_attributes, simulate_from, simulate_sequence

PLANS = Path(__file__).parent / "plans"


def load_plan(name: str) -> dict:
    return json.loads((PLANS / name).read_text())


@pytest.fixture(scope="module")
def oss_plan() -> dict:
    return load_plan("oss_pair_24_osts.json")


@pytest.fixture(scope="module")
def oss_cib(oss_plan):
    return build_cib(oss_plan)


@pytest.fixture(scope="module")
def oss_running(oss_cib):
    return simulate(oss_cib)


@pytest.fixture(scope="module")
def oss_lost(oss_running):
    return simulate_from(oss_running, [NodeLost("oss01")])


@pytest.fixture(scope="module")
def mds_plan() -> dict:
    return load_plan("mds_pair.json")


@pytest.fixture(scope="module")
def mds_running(mds_plan):
    return simulate(build_cib(mds_plan))


def primaries(plan: dict) -> dict[str, str]:
    return {target["label"]: target["primary"] for target in plan["targets"]}


def test_crm_verify_passes_once_both_oss_are_up(oss_running):
    check = verify(oss_running.cib_xml)
    assert check.ok, check.output
    assert oss_running.online_nodes == ("oss01", "oss02")


def test_crm_verify_passes_once_both_mds_are_up(mds_running):
    check = verify(mds_running.cib_xml)
    assert check.ok, check.output


def test_crm_verify_rejects_the_configuration_before_any_node_is_up(oss_cib):
    # The reason the checks above bring the nodes up first: with an empty status both nodes
    # are unclean and crm_verify fails. If this ever passes, the tools changed.
    assert not verify(oss_cib).ok


def test_both_up_every_target_runs_on_its_primary(oss_plan, oss_running):
    assert oss_running.placements == primaries(oss_plan)
    assert oss_running.fenced == ()


def test_both_up_primaries_alternate_so_both_oss_work(oss_running):
    on_oss01 = oss_running.targets_on("oss01")
    on_oss02 = oss_running.targets_on("oss02")
    assert len(on_oss01) == len(on_oss02) == 12
    assert all(int(label[-4:], 16) % 2 == 0 for label in on_oss01)
    assert all(int(label[-4:], 16) % 2 == 1 for label in on_oss02)


def test_lost_oss_is_fenced_and_the_survivor_runs_every_target(oss_lost):
    assert oss_lost.fenced == ("oss01",)
    assert oss_lost.online_nodes == ("oss02",)
    assert set(oss_lost.placements.values()) == {"oss02"}
    assert len(oss_lost.placements) == 24


def test_returning_oss_gets_nothing_back_by_itself(oss_lost):
    returned = simulate_from(oss_lost, [NodeReturns("oss01")])
    assert returned.online_nodes == ("oss01", "oss02")
    assert returned.fenced == ()
    assert set(returned.placements.values()) == {"oss02"}
    # The returned server is healthy and eligible (its health agents report), so staying
    # put is the stickiness at work, not a server that cannot take targets.
    health = node_attributes(returned.cib_xml, "oss01")
    assert int(health["pingd"]) > 0 and int(health["lustred"]) > 0


def test_without_stickiness_targets_would_move_back(oss_cib):
    # Control for the test above: the same sequence with stickiness 0 does move the targets
    # back, so "nothing moves back" really comes from the configuration.
    loose = oss_cib.replace(
        'name="resource-stickiness" value="1000"', 'name="resource-stickiness" value="0"'
    )
    assert loose != oss_cib
    lost, returned = simulate_sequence(loose, [[NodeLost("oss01")], [NodeReturns("oss01")]])
    assert set(lost.placements.values()) == {"oss02"}
    assert len(returned.targets_on("oss01")) == 12


def test_lnet_unhealthy_moves_targets_to_the_partner_without_fencing(oss_running):
    result = simulate_from(oss_running, [LnetUnhealthy("oss02")])
    assert result.fenced == ()
    assert result.online_nodes == ("oss01", "oss02")
    assert set(result.placements.values()) == {"oss01"}


def test_repaired_lnet_gets_nothing_back_by_itself(oss_running):
    down, repaired = simulate_sequence(
        oss_running.cib_xml, [[LnetUnhealthy("oss02")], [LnetHealthy("oss02")]]
    )
    assert set(down.placements.values()) == {"oss01"}
    assert int(node_attributes(repaired.cib_xml, "oss02")["pingd"]) > 0
    assert set(repaired.placements.values()) == {"oss01"}


def test_lustre_unhealthy_moves_targets_to_the_partner_without_fencing(oss_running):
    result = simulate_from(oss_running, [LustreUnhealthy("oss01")])
    assert result.fenced == ()
    assert set(result.placements.values()) == {"oss02"}


def test_unhealthy_partner_leaves_targets_where_they_are(oss_running):
    # LNet down on oss02 while oss01 is lost: no healthy server remains for anything.
    result = simulate_from(oss_running, [NodeLost("oss01"), LnetUnhealthy("oss02")])
    assert result.fenced == ("oss01",)
    assert set(result.placements.values()) == {None}


def test_monitor_failure_recovers_in_place_until_the_migration_threshold(oss_running):
    # What Pacemaker does with migration-threshold=3: the first and second failed monitors
    # restart the OST on the same server ("Recover"); the third bans that server for the
    # target (until failure-timeout, 20 min), and the OST moves to its failover server.
    # Only that target moves, and nobody is fenced (a stop failure would fence; a monitor
    # failure does not).
    once, twice, thrice = simulate_sequence(
        oss_running.cib_xml,
        [[MonitorFails("scratch-OST0000", "oss01")]] * 3,
    )
    assert once.placements["scratch-OST0000"] == "oss01"
    assert re.search(r"Recover\s+scratch-OST0000\s+\(\s*oss01\s*\)", once.summary)
    assert twice.placements["scratch-OST0000"] == "oss01"
    assert thrice.placements["scratch-OST0000"] == "oss02"
    assert re.search(r"Recover\s+scratch-OST0000\s+\(\s*oss01 -> oss02\s*\)", thrice.summary)
    assert thrice.fenced == () and twice.fenced == () and once.fenced == ()
    assert thrice.targets_on("oss01") == [
        label for label in once.targets_on("oss01") if label != "scratch-OST0000"
    ]


def test_monitor_failure_counts_even_without_feature_set_in_the_generated_cib(oss_cib):
    # build_cib() leaves crm_feature_set out; simulate() must stamp it as a live cluster does,
    # or the scheduler reads fail counts in the legacy format and never moves the target.
    assert "crm_feature_set" not in oss_cib
    result = simulate(oss_cib, [MonitorFails("scratch-OST0001")] * 3)
    assert result.placements["scratch-OST0001"] == "oss01"


def test_mds_pair_is_active_passive(mds_running):
    assert mds_running.placements == {"MGS": "mds01", "scratch-MDT0000": "mds01"}


def test_lost_mds_moves_mgs_and_mdt_to_the_partner(mds_running):
    result = simulate_from(mds_running, [NodeLost("mds01")])
    assert result.fenced == ("mds01",)
    assert result.placements == {"MGS": "mds02", "scratch-MDT0000": "mds02"}


def _start_inputs(cib_xml: str, *arguments: str) -> dict[str, set[str]]:
    """Scheduler's transition graph: each start action → the actions it waits for."""
    with tempfile.TemporaryDirectory() as workdir:
        cib = Path(workdir) / "cib.xml"
        graph = Path(workdir) / "graph.xml"
        cib.write_text(cib_xml)
        subprocess.run(
            ["crm_simulate", "--xml-file", str(cib), *arguments, "--save-graph", str(graph)],
            check=True,
            capture_output=True,
        )
        root = ET.parse(graph).getroot()
    inputs: dict[str, set[str]] = {}
    for synapse in root.iter("synapse"):
        for op in synapse.iterfind("./action_set/rsc_op"):
            if op.get("operation") == "start":
                inputs[op.get("operation_key", "")] = {
                    trigger.get("operation_key", "") for trigger in synapse.iterfind(".//trigger/*")
                }
    return inputs


def test_mds_failover_starts_the_mgs_before_the_mdt(mds_running):
    inputs = _start_inputs(mds_running.cib_xml, "--node-fail", "mds01")
    assert "MGS_start_0" in inputs["scratch-MDT0000_start_0"]
    assert "scratch-MDT0000_start_0" not in inputs["MGS_start_0"]


def test_mds_cold_start_starts_the_mgs_before_the_mdt(mds_plan):
    inputs = _start_inputs(_cold_start_cib(mds_plan))
    assert "MGS_start_0" in inputs["scratch-MDT0000_start_0"]
    assert "scratch-MDT0000_start_0" not in inputs["MGS_start_0"]


def _cold_start_cib(plan: dict) -> str:
    """Both MDS up with healthy attributes but no target started yet."""
    running = simulate(build_cib(plan))
    root = ET.fromstring(running.cib_xml)
    for resources in root.iter("lrm_resources"):
        for resource in list(resources):
            if resource.get("id") in ("MGS", "scratch-MDT0000"):
                resources.remove(resource)
    return ET.tostring(root, encoding="unicode")


def test_mgs_trouble_does_not_drag_the_mdt_along(mds_running):
    # The colocation is advice (score 500, below the stickiness): when the MGS has to leave
    # mds01 after three failed monitors, the running MDT stays, and Lustre is fine with MGS
    # and MDT on different servers of the pair (both are formatted with --servicenode).
    result = simulate_from(mds_running, [MonitorFails("MGS", "mds01")] * 3)
    assert result.placements == {"MGS": "mds02", "scratch-MDT0000": "mds01"}
    assert result.fenced == ()


def test_a_first_push_holds_every_target_until_the_health_attributes_are_set(oss_cib):
    # Pushed whole on a fresh cluster, the targets are stopped, then started on whichever
    # server's health agents answer first (the real Pacemaker put a whole MDS pair on its
    # failover server): ha.yml first pushes them unmanaged, waits for these attributes on both
    # servers, then pushes oss_cib. Unmanaged, Pacemaker starts none of them.
    first = first_push(oss_cib)
    assert first["attributes"] == ["lustred", "pingd"]
    held = simulate(first["cib"])
    assert set(held.placements.values()) == {None} and len(held.placements) == 24
    assert set(held.online_nodes) == {"oss01", "oss02"}
