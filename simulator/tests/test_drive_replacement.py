"""Replacing a failed drive as on a real E-series, through the array's own command: the locate
light (`start drive [t,d,s] locate;`, `stop drive locate;`), the technician's swap
(`python -m simulator replace-drive`), the reconstruction the operator starts (`start drive
[t,d,s] reconstruct;`) or the copyback the array starts by itself from a hot spare, their
progress (`show storageArray longRunningOperations;`, `show volumeGroup`) as the clock runs,
and what they cost the OSTs on the group."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest

from provisioning.planner import make_plan
from sensors.arrays import SMCLI_SCRIPT, components_from_smcli
from simulator import failures, provision
from simulator.rack import Rack
from simulator.tests.conftest import MDS_SPEC, simulator_cli
from simulator.tests.test_obdfilter_survey import survey

pytestmark = pytest.mark.rack(seconds=30)

SPARES_SPEC = Path(__file__).resolve().parents[2] / "provisioning/tests/specs/me4084_ssu.json"


def smcli(host_cmd, array, script):
    return host_cmd(None, "SMcli", "-n", array, "-S", "-c", script)


def shown(host_cmd, array, script):
    result = smcli(host_cmd, array, script)
    assert result.returncode == 0, result.stderr
    return result.stdout


def drive_details(host_cmd, array, address):
    """The `show drive [t,d,s]` detail block as {field: value}."""
    text = shown(host_cmd, array, f"show drive [{address}];")
    block = text.split("DETAILS", 1)[1]
    return dict(re.findall(r"^\s+([A-Za-z][\w ]*?):\s+(\S.*?)\s*$", block, re.MULTILINE))


def group_block(host_cmd, array, group):
    text = shown(host_cmd, array, f'show volumeGroup ["{group}"];')
    return dict(re.findall(r"^\s+([A-Za-z][\w ]*?):\s+(\S.*?)\s*$", text, re.MULTILINE))


def operations(host_cmd, array):
    """`show storageArray longRunningOperations` rows: {group: (operation, status, left)}."""
    lines = shown(host_cmd, array, "show storageArray longRunningOperations;").splitlines()
    assert lines[0].split() == ["LOGICAL", "DEVICES", "OPERATION", "STATUS", "TIME", "REMAINING"]
    rows = {}
    for line in lines[1:]:
        name, operation, percent, completed, left = line.split(None, 4)
        rows[name] = (operation, f"{percent} {completed}", left)
    return rows


def advance(root, seconds):
    with Rack.open(root) as rack:
        rack.advance(by=seconds)
        rack.render()


def state(root):
    with Rack.open(root, save_counters=False) as rack:
        return rack.state


def member(root, array, group, index=0):
    return ",".join(map(str, state(root)["arrays"][array]["volume_groups"][group]["drives"][index]))


def replace(root, array, address):
    result = simulator_cli(
        "replace-drive", "--rack", str(root), "--array", array, "--drive", address
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def set_rebuild_seconds(root, seconds):
    """As an operator sets it: `serve --rebuild-seconds`, kept in the rack."""
    result = simulator_cli(
        "serve", "--rack", str(root), "--once", "--interval", "0.05", "--trees-in-place",
        "--rebuild-seconds", str(seconds),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert state(root)["rebuild_seconds"] == seconds


def test_the_locate_light_blinks_on_one_drive_at_a_time(built_rack, host_cmd):
    assert drive_details(host_cmd, "ssu01-a", "0,1,1")["Locate"] == "Off"
    assert smcli(host_cmd, "ssu01-a", "start drive [0,1,1] locate;").returncode == 0
    assert drive_details(host_cmd, "ssu01-a", "0,1,1")["Locate"] == "On"
    # Starting another moves the light; show allDrives shows it in the drive's details.
    assert smcli(host_cmd, "ssu01-a", "start drive [1,3,7] locate;").returncode == 0
    every = shown(host_cmd, "ssu01-a", "show allDrives;")
    blocks = every.split("DETAILS", 1)[1].split("Drive at ")[1:]
    blinking = [block.splitlines()[0] for block in blocks if re.search(r"Locate:\s+On", block)]
    assert blinking == ["Tray 1, Drawer 3, Slot 7"]
    assert every.count("Locate:") == 120
    assert "DETAILS" not in shown(host_cmd, "ssu01-a", "show allDrives summary;")
    # stop drive locate takes no drive, as SANtricity's
    wrong = smcli(host_cmd, "ssu01-a", "stop drive [1,3,7] locate;")
    assert wrong.returncode == 13 and "takes no drive" in wrong.stderr
    assert smcli(host_cmd, "ssu01-a", "stop drive locate;").returncode == 0
    assert "Locate:                   On" not in shown(host_cmd, "ssu01-a", "show allDrives;")
    empty = smcli(host_cmd, "ssu01-a", "start drive [0,1,13] locate;")
    assert (
        empty.returncode == 16 and "There is no drive at tray 0, drawer 1, slot 13" in empty.stderr
    )


def test_replace_then_reconstruct_until_the_group_is_optimal(built_rack, host_cmd):
    address = member(built_rack, "ssu01-a", "ssu01-a-vg00")
    failure = failures_inject(built_rack, "ssu01-a", address)
    refused = smcli(host_cmd, "ssu01-a", f"start drive [{address}] reconstruct;")
    assert refused.returncode == 16 and "has failed: replace it" in refused.stderr
    healthy = member(built_rack, "ssu01-a", "ssu01-a-vg01")
    refused = smcli(host_cmd, "ssu01-a", f"start drive [{healthy}] reconstruct;")
    assert refused.returncode == 16 and "nothing to reconstruct" in refused.stderr

    said = replace(built_rack, "ssu01-a", address)
    assert "ssu01-a-vg00 stays degraded until" in said and f"resolved {failure['id']}" in said
    assert state(built_rack)["failures"] == {}
    assert drive_details(host_cmd, "ssu01-a", address) == {
        "Status": "Replaced",
        "Mode": "Assigned",
        "Associated volume group": "ssu01-a-vg00",
        "Locate": "Off",
    }
    group = group_block(host_cmd, "ssu01-a", "ssu01-a-vg00")
    assert group["Status"] == "Degraded" and group["Replaced drives"] == "1"
    assert "Operation" not in group
    advance(built_rack, 600)  # nothing happens until the operator starts the reconstruction
    assert group_block(host_cmd, "ssu01-a", "ssu01-a-vg00")["Status"] == "Degraded"
    assert operations(host_cmd, "ssu01-a") == {}

    set_rebuild_seconds(built_rack, 600)
    assert smcli(host_cmd, "ssu01-a", f"start drive [{address}] reconstruct;").returncode == 0
    assert operations(host_cmd, "ssu01-a") == {
        "ssu01-a-vg00": ("Reconstruction", "0% COMPLETED", "10 min")
    }
    again = smcli(host_cmd, "ssu01-a", f"start drive [{address}] reconstruct;")
    assert again.returncode == 16 and "already in progress" in again.stderr
    advance(built_rack, 150)
    assert operations(host_cmd, "ssu01-a")["ssu01-a-vg00"][1:] == ("25% COMPLETED", "7 min")
    advance(built_rack, 15)  # progress follows the time spent, not the number of steps
    group = group_block(host_cmd, "ssu01-a", "ssu01-a-vg00")
    assert group["Status"] == "Degraded" and group["Operation"] == "Reconstruction (27% complete)"
    # What the servers' sensors read of it: the group's reconstruction and how far, the new
    # drive not ok (it holds no data yet) and not failed.
    read = {
        (c.component, c.id): c
        for c in components_from_smcli("ssu01-a", shown(host_cmd, "ssu01-a", SMCLI_SCRIPT))
    }
    reconstructing = read[("volume_group", "ssu01-a-vg00")]
    assert (reconstructing.state, reconstructing.operation, reconstructing.progress) == (
        "degraded",
        "reconstruction",
        27,
    )
    assert (read[("drive", address)].state, read[("drive", address)].ok) == ("replaced", False)
    advance(built_rack, 420)
    assert operations(host_cmd, "ssu01-a")["ssu01-a-vg00"][1:] == (
        "97% COMPLETED",
        "less than a minute",
    )
    advance(built_rack, 15)
    group = group_block(host_cmd, "ssu01-a", "ssu01-a-vg00")
    assert group["Status"] == "Optimal" and "Operation" not in group
    assert "Replaced drives" not in group
    assert drive_details(host_cmd, "ssu01-a", address)["Status"] == "Optimal"
    assert operations(host_cmd, "ssu01-a") == {}
    status = json.loads(simulator_cli("status", "--rack", str(built_rack), "--json").stdout)
    assert status["arrays"]["ssu01-a"]["volume_groups"]["ssu01-a-vg00"]["state"] == "optimal"
    assert status["targets"]["scratch-OST0000"]["health"] == "optimal"


def test_a_drive_that_has_not_failed_cannot_be_replaced(built_rack):
    address = member(built_rack, "ssu01-a", "ssu01-a-vg00")
    result = simulator_cli(
        "replace-drive", "--rack", str(built_rack), "--array", "ssu01-a", "--drive", address
    )
    assert result.returncode == 1 and "has not failed (assigned)" in result.stderr


def failures_inject(root, array, address):
    with Rack.open(root) as rack:
        failure = failures.inject(rack, "drive-failed", array=array, drive=address)
        rack.render()
    return failure


# -- a layout with hot spares: two ME4084 arrays, 8 groups of 8+2 and 4 spares each -----------


@pytest.fixture(scope="session")
def _golden_spares(tmp_path_factory):
    root = tmp_path_factory.mktemp("spares") / "rack"
    with Rack.open(root, create=True) as rack:
        provision.build(rack, make_plan(copy.deepcopy(MDS_SPEC)))
        provision.build(rack, make_plan(json.loads(SPARES_SPEC.read_text())))
    return root


@pytest.fixture
def spares_rack(rack_dir, _golden_spares):
    shutil.copytree(_golden_spares, rack_dir, symlinks=True)
    with Rack.open(rack_dir) as rack:
        rack.install_commands()
        rack.state["rebuild_seconds"] = 100
    return rack_dir


def ost_on(root, group):
    """The OST formatted on a volume group of ssu02-a, and the server it is mounted on."""
    rack = state(root)
    volumes = rack["arrays"]["ssu02-a"]["volumes"]
    for target in rack["targets"].values():
        volume = volumes.get(target["volume"])
        if target["kind"] == "OST" and volume and volume["vg"] == group:
            return target["label"], target["mounted_on"]
    raise AssertionError(f"no OST on {group}")


def test_a_hot_spare_is_copied_back_to_the_new_drive(spares_rack, host_cmd, tmp_path):
    address = member(spares_rack, "ssu02-a", "ssu02-a-vg00")
    ost, server = ost_on(spares_rack, "ssu02-a-vg00")
    _, healthy = survey(host_cmd, server, tmp_path, targets=ost)
    failures_inject(spares_rack, "ssu02-a", address)
    spare = ",".join(map(str, state(spares_rack)["arrays"]["ssu02-a"]["volume_groups"][
        "ssu02-a-vg00"]["rebuild"]["spare"]))  # fmt: skip
    assert drive_details(host_cmd, "ssu02-a", spare)["Mode"] == "Hot spare in use"
    assert operations(host_cmd, "ssu02-a")["ssu02-a-vg00"][0] == "Reconstruction"
    advance(spares_rack, 100)
    # The spare holds the failed drive's data: the group is optimal, the spare still in use.
    assert group_block(host_cmd, "ssu02-a", "ssu02-a-vg00")["Status"] == "Optimal"
    assert drive_details(host_cmd, "ssu02-a", spare) == {
        "Status": "Optimal",
        "Mode": "Hot spare in use",
        "Associated volume group": "ssu02-a-vg00",
        "Locate": "Off",
    }
    assert drive_details(host_cmd, "ssu02-a", address)["Status"] == "Failed"

    said = replace(spares_rack, "ssu02-a", address)
    assert f"copyback from hot spare {spare} to it started" in said
    assert drive_details(host_cmd, "ssu02-a", address)["Status"] == "Replaced"
    group = group_block(host_cmd, "ssu02-a", "ssu02-a-vg00")
    assert group["Status"] == "Optimal" and group["Operation"] == "Copyback (0% complete)"
    assert operations(host_cmd, "ssu02-a") == {
        "ssu02-a-vg00": ("Copyback", "0% COMPLETED", "1 min")
    }
    refused = smcli(host_cmd, "ssu02-a", f"start drive [{address}] reconstruct;")
    assert refused.returncode == 16 and "by copyback from the hot spare" in refused.stderr
    # The copy costs the OST about 30 % although no drive is missing.
    _, copying = survey(host_cmd, server, tmp_path, targets=ost)
    ratio = (
        copying["rows"][0]["tests"]["write"]["mb_s"] / healthy["rows"][0]["tests"]["write"]["mb_s"]
    )
    assert 0.6 < ratio < 0.8
    advance(spares_rack, 40)
    assert (
        group_block(host_cmd, "ssu02-a", "ssu02-a-vg00")["Operation"] == "Copyback (40% complete)"
    )
    advance(spares_rack, 60)
    group = group_block(host_cmd, "ssu02-a", "ssu02-a-vg00")
    assert group["Status"] == "Optimal" and "Operation" not in group
    assert address in group["Drive locations"].split()
    assert spare not in group["Drive locations"].split()
    assert drive_details(host_cmd, "ssu02-a", address) == {
        "Status": "Optimal",
        "Mode": "Assigned",
        "Associated volume group": "ssu02-a-vg00",
        "Locate": "Off",
    }
    assert drive_details(host_cmd, "ssu02-a", spare) == {
        "Status": "Optimal",
        "Mode": "Hot spare standby",
        "Locate": "Off",
    }
    _, after = survey(host_cmd, server, tmp_path, targets=ost)
    ratio = (
        after["rows"][0]["tests"]["write"]["mb_s"] / healthy["rows"][0]["tests"]["write"]["mb_s"]
    )
    assert 0.9 < ratio < 1.1


def test_a_drive_replaced_before_the_spare_finished_is_reconstructed(spares_rack, host_cmd):
    address = member(spares_rack, "ssu02-a", "ssu02-a-vg03", 4)
    failures_inject(spares_rack, "ssu02-a", address)
    spare = state(spares_rack)["arrays"]["ssu02-a"]["volume_groups"]["ssu02-a-vg03"]["rebuild"]
    spare = ",".join(map(str, spare["spare"]))
    advance(spares_rack, 30)
    assert operations(host_cmd, "ssu02-a")["ssu02-a-vg03"][1] == "30% COMPLETED"
    said = replace(spares_rack, "ssu02-a", address)
    assert "stays degraded until" in said
    # The unfinished reconstruction is dropped and the spare returned.
    assert drive_details(host_cmd, "ssu02-a", spare)["Mode"] == "Hot spare standby"
    assert operations(host_cmd, "ssu02-a") == {}
    assert group_block(host_cmd, "ssu02-a", "ssu02-a-vg03")["Status"] == "Degraded"
    assert smcli(host_cmd, "ssu02-a", f"start drive [{address}] reconstruct;").returncode == 0
    advance(spares_rack, 100)
    assert group_block(host_cmd, "ssu02-a", "ssu02-a-vg03")["Status"] == "Optimal"
    assert drive_details(host_cmd, "ssu02-a", address)["Mode"] == "Assigned"


def test_clearing_a_drive_failure_still_repairs_at_once(spares_rack, host_cmd):
    address = member(spares_rack, "ssu02-a", "ssu02-a-vg01")
    failure = failures_inject(spares_rack, "ssu02-a", address)
    advance(spares_rack, 100)  # the spare took the drive's place
    result = simulator_cli("clear", "--rack", str(spares_rack), failure["id"])
    assert result.returncode == 0, result.stderr
    assert group_block(host_cmd, "ssu02-a", "ssu02-a-vg01")["Status"] == "Optimal"
    assert drive_details(host_cmd, "ssu02-a", address)["Mode"] == "Assigned"
    table = shown(host_cmd, "ssu02-a", "show allDrives summary;")
    assert len(re.findall(r"Optimal\s+[\d,.]+ GB\s+Hot spare\s*$", table, re.MULTILINE)) == 4
    assert operations(host_cmd, "ssu02-a") == {}


def test_two_spares_in_one_group_are_copied_back_one_after_the_other(spares_rack, host_cmd):
    first = member(spares_rack, "ssu02-a", "ssu02-a-vg05", 0)
    second = member(spares_rack, "ssu02-a", "ssu02-a-vg05", 5)
    for address in (first, second):
        failures_inject(spares_rack, "ssu02-a", address)
        advance(spares_rack, 100)
    assert group_block(host_cmd, "ssu02-a", "ssu02-a-vg05")["Status"] == "Optimal"
    assert "started" in replace(spares_rack, "ssu02-a", first)
    assert "waits for the running one" in replace(spares_rack, "ssu02-a", second)
    assert list(operations(host_cmd, "ssu02-a")) == ["ssu02-a-vg05"]
    advance(spares_rack, 100)
    assert drive_details(host_cmd, "ssu02-a", first)["Status"] == "Optimal"
    assert drive_details(host_cmd, "ssu02-a", second)["Status"] == "Replaced"
    assert operations(host_cmd, "ssu02-a")["ssu02-a-vg05"][:2] == ("Copyback", "0% COMPLETED")
    advance(spares_rack, 100)
    assert operations(host_cmd, "ssu02-a") == {}
    assert drive_details(host_cmd, "ssu02-a", second)["Mode"] == "Assigned"
    table = shown(host_cmd, "ssu02-a", "show allDrives summary;")
    assert len(re.findall(r"Optimal\s+[\d,.]+ GB\s+Hot spare\s*$", table, re.MULTILINE)) == 4
