"""What a failback runs on the pair, in order, for targets a failure left behind: the console's
earlier ban cleared before the failed starts are cleaned up (else a cleaned-up target starts on
the partner while the ban still holds, and stickiness keeps it there), and no move for a
target the clean-up alone starts at home."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from portal.console.services.cluster import _bring_home
from provisioning.ha import build_cib, simulate
from provisioning.ha.operator import Ban, Cleanup, Clear, Move
from provisioning.ha.simulate import Simulation

PLAN = Path(__file__).resolve().parents[3] / "provisioning/tests/plans/oss_pair_24_osts.json"


@pytest.fixture(scope="module")
def left_behind(tmp_path_factory) -> str:
    """OST0000 banned from oss01 by a failover, then its starts failed on both servers (its
    volume group was down): it runs nowhere. OST0002 failed on oss01 and runs on oss02."""
    simulation = Simulation(
        tmp_path_factory.mktemp("cib"), simulate(build_cib(json.loads(PLAN.read_text()))).cib_xml
    )
    ban = subprocess.run(
        Ban("scratch-OST0000", "oss01").argv(),
        env=dict(os.environ, CIB_file=str(simulation.cib)),
        capture_output=True,
        text=True,
    )
    assert ban.returncode == 0, ban.stderr
    simulation.transition(
        "starts fail",
        [
            "--op-inject",
            "scratch-OST0000_start_0@oss01=1",
            "--op-inject",
            "scratch-OST0000_start_0@oss02=1",
            "--op-inject",
            "scratch-OST0002_start_0@oss01=1",
        ],
    )
    return simulation.cib.read_text()


def test_a_banned_target_that_runs_nowhere_is_cleared_then_cleaned_up(left_behind):
    before = {"scratch-OST0000": None}
    assert _bring_home(left_behind, ["scratch-OST0000"], "oss01", before) == [
        Clear("scratch-OST0000"),
        Cleanup("scratch-OST0000"),
    ]


def test_a_failed_target_on_the_partner_is_cleaned_up_then_moved(left_behind):
    before = {"scratch-OST0002": "oss02"}
    assert _bring_home(left_behind, ["scratch-OST0002"], "oss01", before) == [
        Cleanup("scratch-OST0002"),
        Move("scratch-OST0002", "oss01"),
    ]


def test_a_target_with_no_failure_and_no_constraint_is_only_moved(left_behind):
    before = {"scratch-OST0004": "oss02"}
    assert _bring_home(left_behind, ["scratch-OST0004"], "oss01", before) == [
        Move("scratch-OST0004", "oss01")
    ]
