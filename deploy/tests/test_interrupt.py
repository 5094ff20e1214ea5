"""Ctrl-C or SIGTERM to `make test` stops it at once and leaves nothing running: the README's
test command is started on a rack test, interrupted while a playbook of it runs (the hardest
moment: ansible-runner's playbooks live in sessions of their own), and none of its processes
(pytest, Redis, InfluxDB, the virtual rack, its dispatcher, playbooks) may be left 30 s later.

The inner run has its own run directory and ports, so it does not touch this suite's services
or a demo beside it; its processes are found by a mark in their environment."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from deploy.tests.conftest import REPO, free_port, pid_file_alive

pytestmark = pytest.mark.rack(seconds=130)

# A rack test whose set-up provisions the virtual rack through ansible-runner.
RACK_TEST = "portal/health/tests/test_failure_matrix_on_virtual_rack.py"
STARTUP_SECONDS = 240
LEFT_AFTER_SECONDS = 30


def marked(mark: str) -> dict[int, str]:
    """pid -> command line of every process whose environment carries ``mark``."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
            if f"OSTARA_INTERRUPT_PROBE={mark}".encode() in environ:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
                found[int(proc.name)] = command.decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
    return found


def service_dirs(run_dir: Path) -> list[Path]:
    """The inner run's run directory and those of its pytest-xdist workers (gw<N>), each with
    services of its own."""
    return [run_dir, *sorted(run_dir.glob("gw*"))]


def services_left(run_dir: Path) -> list[str]:
    """The inner run's Redis and InfluxDB still running, by their pid files (Redis rewrites its
    process title over its environment, so the mark cannot find it)."""
    left = []
    for pid_file in sorted(p for d in service_dirs(run_dir) for p in (d / "pid").glob("*.pid")):
        if pid := pid_file_alive(pid_file):
            left.append(f"{pid_file.stem} ({pid})")
    return left


def wait_for(what: str, seconds: float, condition):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what} within {seconds:.0f} s")


@pytest.fixture
def inner_run(tmp_path):
    """`make test` on the rack test, in a session of its own (a terminal's process group)."""
    mark = uuid.uuid4().hex
    env = dict(
        os.environ,
        OSTARA_INTERRUPT_PROBE=mark,
        OSTARA_TEST_RUN_DIR=str(tmp_path / "run"),
        OSTARA_TEST_REDIS_PORT=str(free_port()),
        OSTARA_TEST_INFLUXDB_PORT=str(free_port()),
        OSTARA_TEST_INFLUXDB_RPC_PORT=str(free_port()),
        OSTARA_TEST_PORTAL_PORT=str(free_port()),
        # Processes as make test runs them, but two: one for the rack test, one with nothing to do.
        OSTARA_TEST_WORKERS="2",
        PYTEST_ARGS=f"{RACK_TEST} -p no:cacheprovider --junitxml={tmp_path / 'junit.xml'}",
    )
    env.pop("OSTARA_TEST_RUN", None)
    # Not the outer make's variables (`make test PYTEST_ARGS=...` passes them on in MAKEFLAGS,
    # and they would outweigh the inner run's own PYTEST_ARGS).
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(name, None)
    log = (tmp_path / "make-test.log").open("w")
    make = subprocess.Popen(
        ["make", "test"],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield make, mark, tmp_path / "make-test.log"
    finally:
        for pid in marked(mark):  # a failed test still leaves nothing behind
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for run_dir in service_dirs(tmp_path / "run"):
            subprocess.run(
                [str(REPO / "deploy" / "services.sh"), "test", "stop"],
                env={**env, "OSTARA_TEST_RUN_DIR": str(run_dir)},
                capture_output=True,
                timeout=60,
            )
        make.wait(timeout=30)
        log.close()


@pytest.mark.parametrize(
    ("how", "when"),
    [("ctrl-c", "ansible-playbook"), ("sigterm", "simulator serve")],
    ids=[
        "Ctrl-C to the terminal's process group while a playbook runs",
        "SIGTERM to make once the virtual rack runs",
    ],
)
def test_an_interrupted_make_test_leaves_nothing_running(inner_run, how, when):
    make, mark, log = inner_run
    wait_for(
        f"{when} of the rack test running (log: {log.read_text()[-2000:]})",
        STARTUP_SECONDS,
        lambda: any(when in cmd for cmd in marked(mark).values()),
    )
    if how == "ctrl-c":
        os.killpg(make.pid, signal.SIGINT)
    else:
        make.send_signal(signal.SIGTERM)
    interrupted = time.monotonic()
    deadline = interrupted + LEFT_AFTER_SECONDS
    run_dir = log.parent / "run"
    while (marked(mark) or services_left(run_dir)) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = [f"{pid} {cmd[:120]}" for pid, cmd in sorted(marked(mark).items())]
    left += services_left(run_dir)
    assert not left, f"left {LEFT_AFTER_SECONDS} s after the {how}: " + "; ".join(left)
    assert make.wait(timeout=5) != 0
    output = log.read_text()
    # pytest took the interrupt (its KeyboardInterrupt), or, on a machine too busy for it to stop
    # within its 20 s, the script says it killed it: never a silent kill.
    assert (
        "KeyboardInterrupt" in output
        or "pytest did not stop within 20 s of the interrupt: killed it" in output
    ), output[-2000:]
    assert "stopped influxdb" in output and "stopped redis" in output, output[-2000:]
