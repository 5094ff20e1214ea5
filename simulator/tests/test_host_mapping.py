"""SMcli host groups and LUN mappings: once an array has mappings, a server sees only the
volumes mapped to a host group it belongs to (SANtricity's storage partitions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SPEC = (
    Path(__file__).resolve().parents[2] / "provisioning" / "tests" / "specs" / "reference_ssu.json"
)


def _run(rack: Path, host: str, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{rack / 'hosts' / host / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=60)


def _smcli(rack: Path, script: str) -> subprocess.CompletedProcess:
    return _run(rack, "oss01", "SMcli", "-n", "ssu01-a", "-S", "-c", script)


def test_mappings_decide_which_server_sees_a_volume(tmp_path):
    rack = tmp_path / "rack"
    subprocess.run(
        [sys.executable, "-m", "simulator", "add", "--rack", str(rack), str(SPEC)],
        check=True,
        capture_output=True,
    )
    created = _smcli(
        rack,
        "create volumeGroup drives=(0,1,1 0,1,2 0,2,1 0,2,2 0,3,1 0,3,2 "
        '0,4,1 0,4,2 0,5,1 0,5,2) raidLevel=6 userLabel="vg0"; create volume '
        'volumeGroup="vg0" userLabel="vol0" segmentSize=128 owner=a;',
    )
    assert created.returncode == 0, created.stderr
    # No mapping yet: the Default Group, every cabled server sees the volume.
    assert _run(rack, "oss02", "tunefs.lustre", "--dryrun", "/dev/mapper/vol0").returncode == 19

    mapped = _smcli(
        rack,
        'create hostGroup userLabel="ssu01"; create host userLabel="oss01" '
        'hostGroup="ssu01"; create mapping volume="vol0" logicalUnitNumber=0 '
        'hostGroup="ssu01";',
    )
    assert mapped.returncode == 0, mapped.stderr
    listing = _smcli(rack, "show allHostGroups; show storageArray lunMappings;").stdout
    assert "HOST GROUP ssu01" in listing and "   Host: oss01" in listing
    assert "vol0                 0    Host Group ssu01" in listing
    # oss02 is not in the host group: the volume is gone from it, as on a real array.
    missing = _run(rack, "oss02", "tunefs.lustre", "--dryrun", "/dev/mapper/vol0")
    assert "No such" in missing.stdout + missing.stderr
    assert _run(rack, "oss01", "tunefs.lustre", "--dryrun", "/dev/mapper/vol0").returncode == 19

    again = _smcli(rack, 'create mapping volume="vol0" logicalUnitNumber=1 hostGroup="ssu01";')
    assert again.returncode == 16
    assert 'The volume "vol0" is already mapped.' in again.stdout + again.stderr
