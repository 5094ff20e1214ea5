"""The demo the browser walks of portal/tests share: one `deploy/demo.sh start` per test session
(its build is minutes of the suite's budget), on its own ports and run directory.

The walks that use it run in their files' order: the newcomer's first minutes
(test_demo_first_minutes_browser.py) first, on the demo as fresh as `make demo` leaves it, then
(`make long`) the planned acts and the operator's hour (test_operator_hour_browser.py), which
fails and replaces a drive and stops the demo's mail server for a while."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

import pytest

from portal.conftest import REPO

DEMO_SCRIPT = REPO / "deploy" / "demo.sh"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def demo_script(demo: dict, action: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`deploy/demo.sh ACTION` on the shared demo (start again restarts only what stopped)."""
    return subprocess.run(
        [str(DEMO_SCRIPT), action],
        env=demo["env"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="session")
def fresh_demo(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("demo-run")
    # The demo's own settings, but the run's mark (deploy/test.sh): an interrupted run's sweep
    # finds the demo's processes by it, as every other process the run started.
    env = {
        key: value
        for key, value in os.environ.items()
        if key == "OSTARA_TEST_RUN"
        or not key.startswith(("OSTARA_", "REDIS_URL", "INFLUXDB_", "DJANGO_SETTINGS"))
    }
    env.update(
        OSTARA_RUN_DIR=str(run_dir),
        OSTARA_REDIS_PORT=str(free_port()),
        OSTARA_INFLUXDB_PORT=str(free_port()),
        OSTARA_INFLUXDB_RPC_PORT=str(free_port()),
        OSTARA_PORTAL_PORT=str(free_port()),
        OSTARA_SMTP_PORT=str(free_port()),
    )
    demo = {"env": env}
    started = demo_script(demo, "start")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        demo.update(
            url=f"http://127.0.0.1:{env['OSTARA_PORTAL_PORT']}",
            password=(run_dir / "admin-password").read_text().strip(),
            output=started.stdout,
            run_dir=run_dir,
        )
        yield demo
    finally:
        demo_script(demo, "stop")
        shutil.rmtree(run_dir, ignore_errors=True)
