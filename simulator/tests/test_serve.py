"""`python -m simulator serve` runs the clock; the rack lives in its directory, so a restarted
serve carries on where the last one stopped (same counters, same jobs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sensors import parsers
from simulator.tests.conftest import simulator_cli


def ost_stats(root):
    path = root / "hosts/oss01/proc/fs/lustre/obdfilter/scratch-OST0000/stats"
    return parsers.parse_stats(path.read_text())


def test_serve_refreshes_and_a_restart_resumes(built_rack):
    first = simulator_cli(
        "serve",
        "--rack",
        str(built_rack),
        "--once",
        "--interval",
        "0.2",
        "--speed",
        "50",
        "--scenario",
        "balanced",
    )
    assert first.returncode == 0, first.stderr
    before = ost_stats(built_rack)
    status = json.loads(simulator_cli("status", "--rack", str(built_rack), "--json").stdout)
    assert status["scenario"] == "balanced" and status["jobs"] > 0
    second = simulator_cli(
        "serve", "--rack", str(built_rack), "--once", "--interval", "0.2", "--speed", "50"
    )
    assert second.returncode == 0, second.stderr
    after = ost_stats(built_rack)
    assert after["start_time"] == before["start_time"]  # the same mount: no reset
    assert after["snapshot_time"] > before["snapshot_time"]
    for name, counter in before["counters"].items():
        assert after["counters"][name]["samples"] >= counter["samples"]
    assert after["counters"]["statfs"]["samples"] > before["counters"]["statfs"]["samples"]
    status = json.loads(simulator_cli("status", "--rack", str(built_rack), "--json").stdout)
    assert status["scenario"] == "balanced"
    proc = built_rack / "hosts/oss01/proc"
    if Path("/dev/shm").is_dir():
        # serve keeps the servers' trees on a memory filesystem, linked from the host root
        assert proc.is_symlink() and str(proc.resolve()).startswith("/dev/shm/ostara-rack-")
        shutil.rmtree(proc.resolve().parent.parent, ignore_errors=True)


def test_cli_rejects_a_bad_spec(rack_dir, tmp_path):
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({"filesystem": "scratch"}))
    result = simulator_cli("add", "--rack", str(rack_dir), str(spec))
    assert result.returncode == 1 and result.stderr.startswith("error: invalid spec")
    missing = simulator_cli("status", "--rack", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "no virtual rack" in missing.stderr
