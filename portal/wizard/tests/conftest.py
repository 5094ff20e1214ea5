from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "provisioning" / "tests" / "specs"


def load_spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def simulator(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "simulator", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def virtual_rack(tmp_path, settings):
    """A rack with blank arrays, as if just racked and cabled: the MDS pair and one SSU. Its
    arrays answer their SANtricity REST API (one port per controller), as real ones do."""
    from simulator.santricity.server import ArraysApi

    rack = tmp_path / "rack"
    for name in ("mds_pair", "reference_ssu"):
        simulator("add", "--rack", str(rack), str(SPECS / f"{name}.json"))
    settings.VIRTUAL_RACK = rack
    settings.ANSIBLE_WORK_DIR = tmp_path / "ansible"
    arrays_api = ArraysApi(rack)
    arrays_api.start()
    yield rack
    from portal.conftest import stop_virtual_sensors

    stop_virtual_sensors(rack)
    arrays_api.stop()


def on_host(rack: Path, host: str, *command: str) -> subprocess.CompletedProcess:
    """Run a command on a virtual server, as ansible does: its bin/ first on PATH."""
    import os

    env = dict(os.environ, PATH=f"{rack / 'hosts' / host / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(list(command), env=env, capture_output=True, text=True, timeout=120)


BMC = {host: ("root", f"secret-{host}") for host in ("mds01", "mds02", "oss01", "oss02")}
