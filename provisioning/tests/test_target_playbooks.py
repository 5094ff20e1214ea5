"""format.yml and mount.yml on the virtual rack's MDS pair, through the real runner: each sends
a server's per-target commands in one task (library/ostara_commands.py). A formatted target is
left alone, a device that holds another target stops the run before anything is formatted,
the targets mount on their primaries with their mount points made on both servers, and a
second run changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.specs import mds_spec
from provisioning.planner import make_plan
from provisioning.playbook_vars import target_list
from provisioning.runner import run_playbook
from provisioning.tests.test_corosync_playbook import inventory, on
from simulator import provision
from simulator.rack import Rack


@pytest.fixture
def plan() -> dict:
    return make_plan(mds_spec())


@pytest.fixture
def rack(tmp_path, plan) -> Path:
    """The pair's volumes made and formatted, nothing mounted."""
    root = tmp_path / "rack"
    with Rack.open(root, create=True) as opened:
        provision.build(opened, plan, mount=False)
    return root


def run(rack: Path, plan: dict, playbook: str, tmp_path: Path, targets: list[dict]):
    output: list[str] = []
    result = run_playbook(
        playbook,
        inventory(rack, plan),
        {"ostara_targets": {plan["ssu"]: targets}},
        work_dir=tmp_path / "work",
        on_output=output.append,
    )
    return result, "\n".join(output)


def said(rack: Path, host: str, *command: str) -> str:
    """What a command run on the virtual host printed."""
    return on(rack, host, *command).stdout


def pair_targets(plan: dict) -> list[dict]:
    """The pair's targets as the portal hands them over (the MGS is on the pair's first server)."""
    return target_list(plan, plan["servers"][0]["nids"])


def test_formatted_targets_are_left_alone_and_mount_once_on_their_primaries(rack, plan, tmp_path):
    targets = pair_targets(plan)
    formatted, output = run(rack, plan, "format.yml", tmp_path, targets)
    assert formatted.succeeded, formatted.summary()
    assert formatted.changed_total == 0, output

    mounted, output = run(rack, plan, "mount.yml", tmp_path, targets)
    assert mounted.succeeded, mounted.summary()
    mounts = said(rack, "mds01", "mount", "-t", "lustre")
    for target in targets:
        assert f"{target['device']} on {target['mountpoint']} type lustre" in mounts
        for host in ("mds01", "mds02"):  # the failover server has them too
            assert (rack / "hosts" / host / target["mountpoint"].lstrip("/")).is_dir()
    assert said(rack, "mds02", "mount", "-t", "lustre") == ""
    # The MGT first: the MDT registered with the MGS when it first mounted.
    mdt = said(rack, "mds01", "tunefs.lustre", "--dryrun", targets[1]["device"])
    assert "scratch-MDT0000" in mdt and "first_time" not in mdt, mdt

    again, output = run(rack, plan, "mount.yml", tmp_path, targets)
    assert again.succeeded, again.summary()
    assert again.changed_total == 0, output
    assert said(rack, "mds01", "mount", "-t", "lustre") == mounts


def test_a_device_that_holds_another_target_stops_the_run_before_any_format(rack, plan, tmp_path):
    targets = pair_targets(plan)
    mgt, mdt = targets
    before = said(rack, "mds01", "tunefs.lustre", "--dryrun", mgt["device"])
    # The plan says the MDT is on the MGT's device (a device renamed under the appliance).
    swapped = {**mdt, "device": mgt["device"], "tunefs": mgt["tunefs"]}
    result, output = run(rack, plan, "format.yml", tmp_path, [mgt, swapped])
    assert not result.succeeded
    assert (
        f"{mgt['device']} already holds a Lustre target that is not scratch-MDT0000; "
        "not formatting it" in output
    )
    assert result.changed_total == 0
    assert said(rack, "mds01", "tunefs.lustre", "--dryrun", mgt["device"]) == before
