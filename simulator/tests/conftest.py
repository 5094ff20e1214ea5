"""A small world for the virtual rack's tests: an MDS pair and one reference SSU (2 OSS,
2 x 120 drives, 24 OSTs), planned by the product's own planner."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.specs import mds_spec
from provisioning.planner import make_plan
from simulator import provision
from simulator.rack import Rack

# The benchmark's MDS pair: one spec for the rack tests and the benchmark.
MDS_SPEC = mds_spec()


def ssu_spec(number: int = 1, segment_kib: int = 128) -> dict:
    """The reference SSU: two OSS, two E5560 + DE6600 arrays of 4 TB drives, 8+2."""
    first = 10 + 2 * number - 1
    return {
        "filesystem": "scratch",
        "ssu": f"ssu{number:02d}",
        "servers": [
            {
                "hostname": f"oss{2 * number - 1:02d}",
                "nids": [f"10.10.0.{first}@o2ib"],
                "bmc": f"10.20.0.{first}",
                "pdu_outlet": f"pdu1:{first}",
            },
            {
                "hostname": f"oss{2 * number:02d}",
                "nids": [f"10.10.0.{first + 1}@o2ib"],
                "bmc": f"10.20.0.{first + 1}",
                "pdu_outlet": f"pdu2:{first + 1}",
            },
        ],
        "arrays": [
            {
                "name": f"ssu{number:02d}-a",
                "controller": "E5560",
                "expansions": ["DE6600"],
                "drive_tb": 4,
            },
            {
                "name": f"ssu{number:02d}-b",
                "controller": "E5560",
                "expansions": ["DE6600"],
                "drive_tb": 4,
            },
        ],
        "raid": "8+2",
        "segment_kib": segment_kib,
        "first_ost_index": 24 * (number - 1),
    }


@pytest.fixture(scope="session")
def mds_plan() -> dict:
    return make_plan(copy.deepcopy(MDS_SPEC))


@pytest.fixture(scope="session")
def ssu_plan() -> dict:
    return make_plan(ssu_spec(1))


@pytest.fixture
def rack_dir(tmp_path):
    return tmp_path / "rack"


@pytest.fixture(scope="session")
def _golden_rack(tmp_path_factory, mds_plan, ssu_plan):
    root = tmp_path_factory.mktemp("golden") / "rack"
    with Rack.open(root, create=True) as rack:
        provision.build(rack, mds_plan)
        provision.build(rack, ssu_plan)
    return root


@pytest.fixture
def built_rack(rack_dir, _golden_rack):
    """A rack with the MDS pair and one SSU formatted and mounted on their primaries."""
    shutil.copytree(_golden_rack, rack_dir, symlinks=True)
    with Rack.open(rack_dir) as rack:
        rack.install_commands()  # the copies must act on this rack, not the golden one
    return rack_dir


REPO = Path(__file__).resolve().parents[2]


def _command_env(rack_dir: Path, host: str | None, extra: dict | None = None) -> dict:
    bin_dir = rack_dir / "hosts" / host / "bin" if host else rack_dir / "bin"
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    env.update(extra or {})
    return env


@pytest.fixture
def host_cmd(rack_dir):
    """Run a command on a virtual server (or on the management server with host=None) the
    way a playbook does: the host's bin/ first on PATH."""

    def run(
        host: str | None,
        *args: str,
        env: dict | None = None,
        input: str | None = None,
        cwd: Path | None = None,
    ):
        return subprocess.run(
            list(args),
            capture_output=True,
            text=True,
            input=input,
            env=_command_env(rack_dir, host, env),
            cwd=cwd,
            timeout=120,
        )

    return run


def simulator_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "simulator", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


@pytest.fixture(scope="session")
def _golden_clustered(tmp_path_factory, _golden_rack, ssu_plan, mds_plan):
    """The golden rack with both pairs' CIBs (provisioning.ha.build_cib) pushed through the
    virtual cibadmin, as the provisioning playbook does."""
    from provisioning.ha import build_cib

    root = tmp_path_factory.mktemp("clustered") / "rack"
    shutil.copytree(_golden_rack, root, symlinks=True)
    with Rack.open(root) as rack:
        rack.install_commands()
    for plan, host in ((mds_plan, "mds01"), (ssu_plan, "oss01")):
        cib = root.parent / f"{plan['ssu']}.xml"
        cib.write_text(build_cib(plan))
        result = subprocess.run(
            ["cibadmin", "--replace", "--xml-file", str(cib)],
            capture_output=True,
            text=True,
            env=_command_env(root, host),
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
    return root


@pytest.fixture
def clustered_rack(rack_dir, _golden_clustered):
    shutil.copytree(_golden_clustered, rack_dir, symlinks=True)
    with Rack.open(rack_dir) as rack:
        rack.install_commands()
    return rack_dir
