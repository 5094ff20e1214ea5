"""deploy/lib.sh's pid files on a busy machine: pids wrap every few minutes during a test run, so
the pid in a stale file may belong to someone else's process by the time it is stopped. Only the
process the file was written for is signalled."""

from __future__ import annotations

import os
import subprocess
import threading
import time

from deploy.tests.conftest import REPO

LIB = REPO / "deploy" / "lib.sh"


def lib(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f'source "$0"; {script}', str(LIB), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def sleeper() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "300"])


def test_the_process_a_pid_file_was_written_for_is_stopped(tmp_path):
    process = sleeper()
    reaped = threading.Thread(target=process.wait)  # as its parent would: no zombie left
    reaped.start()
    pid_file = tmp_path / "service.pid"
    pid_file.write_text(f"{process.pid}\n")
    done = lib('stop_pid "$1" service', str(pid_file))
    reaped.join(10)
    assert process.returncode == -15, done.stderr
    assert "stopped service" in done.stderr
    assert not pid_file.exists()


def test_a_process_that_took_a_stale_files_pid_is_left_alone(tmp_path):
    """The file was written before the process started: its own process is gone and the pid
    reused (here: the file's time set back, as an hour-old file of a crashed service is)."""
    process = sleeper()
    try:
        pid_file = tmp_path / "service.pid"
        pid_file.write_text(f"{process.pid}\n")
        hour_ago = time.time() - 3600
        os.utime(pid_file, (hour_ago, hour_ago))
        assert lib('pid_alive "$1"', str(pid_file)).returncode == 1
        done = lib('stop_pid "$1" service', str(pid_file))
        assert done.returncode == 0, done.stderr
        time.sleep(0.5)
        assert process.poll() is None, "a process that only reused the pid was signalled"
        assert not pid_file.exists()  # the stale file is gone
    finally:
        process.kill()
        process.wait()


def test_a_pid_file_that_names_no_number_is_not_alive(tmp_path):
    pid_file = tmp_path / "service.pid"
    for text in ("", "-1\n", "1 2\n", "$(true)\n"):
        pid_file.write_text(text)
        assert lib('pid_alive "$1"', str(pid_file)).returncode == 1, repr(text)
