"""The virtual arrays' REST API as a command: `python -m simulator arrays-api --rack DIR`
prints each controller's address and stops on SIGTERM; `serve --arrays-api` runs it beside the
rack's clock and stops it with itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from simulator.tests.conftest import REPO, simulator_cli
from simulator.tests.test_santricity_api import SYSTEM, get, management, refused

ARRAY = "ssu01-a"


def test_arrays_api_command_records_its_ports_and_stops_on_sigterm(built_rack):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", "arrays-api", "--rack", str(built_rack)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        lines = []
        while not lines or not lines[-1].startswith("serving"):
            line = process.stdout.readline()
            assert line, process.stderr.read()
            lines.append(line)
        record = management(built_rack, ARRAY)
        port = record["controllers"]["B"]["port"]
        assert f"{ARRAY} controller B: https://127.0.0.1:{port}\n" in lines
        started = time.monotonic()
        assert get(built_rack, f"{SYSTEM}/controllers", controller="B", array=ARRAY)
        # An answer takes a real controller's time (--response-ms, 100 by default).
        assert time.monotonic() - started >= 0.1
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert refused(built_rack, "B", ARRAY)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_can_run_the_arrays_api_beside_the_clock(built_rack):
    result = simulator_cli(
        "serve", "--rack", str(built_rack), "--once", "--interval", "0.05", "--trees-in-place",
        "--arrays-api",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    record = management(built_rack, ARRAY)
    port = record["controllers"]["A"]["port"]
    assert f"{ARRAY} controller A: https://127.0.0.1:{port}" in result.stdout
    assert refused(built_rack, "A", ARRAY)  # it stopped with serve
