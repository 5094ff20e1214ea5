"""`python -m provisioning.ha`: CIB file, pcs script and what-if reports from a plan file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from provisioning.ha import build_cib, build_pcs_script

REPO = Path(__file__).parents[2]
PLANS = Path(__file__).parent / "plans"
OSS_PLAN = PLANS / "oss_pair_24_osts.json"
MDS_PLAN = PLANS / "mds_pair.json"


def run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "provisioning.ha", *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def report_lines(stdout: str) -> dict[str, str]:
    """Target label → the rest of its line in the what-if report."""
    return {
        line.split()[0]: " ".join(line.split()[1:])
        for line in stdout.splitlines()
        if line.startswith(("scratch-", "MGS"))
    }


def test_cib_option_writes_the_configuration(tmp_path):
    out = tmp_path / "pair.xml"
    completed = run(str(OSS_PLAN), "--cib", str(out))
    assert completed.returncode == 0, completed.stderr
    assert out.read_text() == build_cib(json.loads(OSS_PLAN.read_text()))


def test_pcs_option_prints_the_script():
    completed = run(str(MDS_PLAN), "--pcs")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == build_pcs_script(json.loads(MDS_PLAN.read_text()))


def test_plain_run_verifies_and_shows_where_targets_run():
    completed = run(str(MDS_PLAN))
    assert completed.returncode == 0, completed.stderr
    assert "crm_verify (both servers up): OK" in completed.stdout
    assert report_lines(completed.stdout) == {
        "MGS": "mds01 on its primary",
        "scratch-MDT0000": "mds01 on its primary",
    }


def test_what_if_node_lost_reports_the_fence_and_the_failover():
    completed = run(str(OSS_PLAN), "--what-if", "node-lost:oss01")
    assert completed.returncode == 0, completed.stderr
    assert "fenced:  oss01" in completed.stdout
    lines = report_lines(completed.stdout)
    assert len(lines) == 24
    assert lines["scratch-OST0000"] == "oss02 on its failover server"
    assert lines["scratch-OST0001"] == "oss02 on its primary"


def test_what_ifs_apply_one_after_the_other():
    completed = run(str(OSS_PLAN), "--what-if", "node-lost:oss01", "--what-if", "lnet-down:oss02")
    assert completed.returncode == 0, completed.stderr
    assert "node-lost:oss01 then lnet-down:oss02" in completed.stdout
    assert set(report_lines(completed.stdout).values()) == {"- NOT RUNNING"}


def test_summary_option_adds_crm_simulates_own_account():
    completed = run(str(MDS_PLAN), "--what-if", "lnet-down:mds01", "--summary")
    assert completed.returncode == 0, completed.stderr
    assert "Transition Summary:" in completed.stdout
    assert re.search(r"Move\s+MGS\s+\(\s*mds01 -> mds02\s*\)", completed.stdout)
    assert "fenced:  nothing" in completed.stdout


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda plan: plan["servers"][1].pop("bmc"), "servers[1].bmc"),
        (lambda plan: plan["servers"][0].update(pdu_outlet=""), "servers[0].pdu_outlet"),
        (lambda plan: plan["targets"][5].update(device="/dev/sd b"), "targets[5].device"),
        (lambda plan: plan.update(fencing=False), "plan.fencing"),
    ],
)
def test_bad_plan_exits_2_naming_the_field(tmp_path, change, field):
    plan = json.loads(OSS_PLAN.read_text())
    change(plan)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    completed = run(str(path), "--pcs")
    assert completed.returncode == 2
    assert field in completed.stderr
    assert completed.stdout == ""


def test_plan_that_is_not_json_exits_2(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text("{not json")
    completed = run(str(path), "--cib", str(tmp_path / "out.xml"))
    assert completed.returncode == 2
    assert "not JSON" in completed.stderr
    assert not (tmp_path / "out.xml").exists()


@pytest.mark.parametrize(
    "what_if",
    ["node-lost:oss09", "lnet-down:", "explode:oss01", "monitor-fails:scratch-OST0999@oss01"],
)
def test_what_if_naming_nothing_of_the_pair_exits_2(what_if):
    completed = run(str(OSS_PLAN), "--what-if", what_if)
    assert completed.returncode == 2
    assert "error:" in completed.stderr
