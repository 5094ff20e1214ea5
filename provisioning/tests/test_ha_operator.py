"""An operator's acts (move, ban, clear, standby) tried on a copy of a running pair's CIB with
Pacemaker's own scheduler: what the console shows before anyone confirms a failover."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from provisioning.ha import build_cib, simulate, simulate_from
from provisioning.ha.history import clean_up, failed_nodes, failed_resources
from provisioning.ha.operator import Ban, Cleanup, Clear, Move, Standby, parse_action, what_if
from provisioning.ha.simulate import NodeLost, NodeReturns, Simulation, WhatIfError

PLAN = Path(__file__).parent / "plans" / "oss_pair_24_osts.json"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def running() -> str:
    """The pair's CIB with both servers up and every target started, as cibadmin --query."""
    return simulate(build_cib(json.loads(PLAN.read_text()))).cib_xml


def simulate_from_running(running: str, failures):
    return simulate_from(simulate(running), failures)


def test_a_ban_moves_one_target_to_the_partner(running):
    result = what_if(running, [Ban("scratch-OST0000", "oss01", "PT1H")])
    assert result.moves == [("scratch-OST0000", "oss01", "oss02")]
    assert result.before["scratch-OST0002"] == result.after["scratch-OST0002"] == "oss01"


def test_standby_moves_every_target_of_the_server(running):
    result = what_if(running, [Standby("oss01")])
    moved = {label for label, _, where in result.moves if where == "oss02"}
    assert moved == {f"scratch-OST{i:04x}" for i in range(0, 24, 2)}
    assert "oss01" in result.online_now


def test_failback_after_a_crash_brings_the_targets_home(running):
    after_crash = simulate_from_running(running, [NodeLost("oss01"), NodeReturns("oss01")])
    assert after_crash.placements["scratch-OST0000"] == "oss02"  # stickiness keeps it there
    back = what_if(
        after_crash.cib_xml, [Clear("scratch-OST0000"), Move("scratch-OST0000", "oss01")]
    )
    assert back.moves == [("scratch-OST0000", "oss02", "oss01")]


def test_a_ban_and_a_standby_together_strand_a_target(running):
    result = what_if(running, [Ban("scratch-OST0000", "oss01"), Standby("oss02")])
    assert result.after["scratch-OST0000"] is None


def test_bad_acts_are_refused_by_name(running):
    with pytest.raises(WhatIfError, match="not a node"):
        what_if(running, [Standby("oss09")])
    with pytest.raises(WhatIfError, match="not a valid name"):
        parse_action("move:scratch-OST0000;reboot@oss01")
    with pytest.raises(WhatIfError, match="ISO 8601"):
        what_if(running, [Ban("scratch-OST0000", "oss01", "1 hour")])
    assert parse_action("node-lost:oss01") is None  # a failure, not an act
    assert parse_action("unstandby:oss02") == Standby("oss02", on=False)


def test_the_command_line_on_a_live_cib(running, tmp_path):
    live = tmp_path / "cib.xml"
    live.write_text(running)

    def what_if_on_live(act: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "provisioning.ha", str(PLAN), "--live-cib", str(live)]
            + ["--what-if", act],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )

    completed = what_if_on_live("standby:oss02")
    assert completed.returncode == 0, completed.stderr
    assert "scratch-OST0001  oss01       on its failover server (was oss02)" in completed.stdout
    refused = what_if_on_live("node-lost:oss01")
    assert refused.returncode == 2 and "operator acts only" in refused.stderr


def test_a_cleanup_erases_the_failures_of_one_target_where_it_failed(running, tmp_path):
    # Starts of OST0000 fail on both servers (its volume group was down): Pacemaker records a
    # fail count and a last failure on each; the clean-up erases them, and nothing else.
    simulation = Simulation(tmp_path, running)
    simulation.transition(
        "its starts fail",
        [
            "--op-inject",
            "scratch-OST0000_monitor_0@oss01=7",
            "--op-fail",
            "scratch-OST0000_start_0@oss01=1",
            "--op-inject",
            "scratch-OST0000_start_0@oss02=1",
        ],
    )
    root = ET.fromstring(simulation.cib.read_text())
    assert failed_nodes(root, "scratch-OST0000") == ["oss01", "oss02"]
    assert failed_nodes(root, "scratch-OST0002") == []
    assert failed_resources(root) == ["scratch-OST0000"]
    assert clean_up(root, "scratch-OST0000", "oss02") == ["oss02"]
    assert failed_nodes(root, "scratch-OST0000") == ["oss01"]
    assert clean_up(root, "scratch-OST0000") == ["oss01"]
    assert failed_resources(root) == []
    text = ET.tostring(root, encoding="unicode")
    assert "fail-count-scratch-OST0000" not in text and "scratch-OST0002" in text
    assert parse_action("cleanup:scratch-OST0000") == Cleanup("scratch-OST0000")
    assert Cleanup("scratch-OST0000").argv() == [
        "crm_resource",
        "--cleanup",
        "--resource",
        "scratch-OST0000",
    ]


def test_maintenance_end_counts_on_the_health_agents_starting_again(running, tmp_path):
    # In standby the node's health agents stop, and their stop deletes its attributes (as the
    # real Pacemaker showed): without them no target may run there. Ending the maintenance
    # starts them again; the what-if must play them, or it says the targets cannot go home.
    simulation = Simulation(tmp_path, running)
    simulation.transition("now", [])
    simulation.run_command(Standby("oss01").argv(), "standby")
    for name in ("pingd", "lustred"):
        simulation.set_attribute("oss01", name, None)
    in_standby = simulation.cib.read_text()
    assert 'name="pingd"' not in in_standby.split('uname="oss01"', 2)[-1].split("</node_state>")[0]
    home = what_if(in_standby, [Standby("oss01", on=False), Move("scratch-OST0000", "oss01")])
    assert home.after["scratch-OST0000"] == "oss01"
