"""deploy/lib.sh's pid files: the process a file names is stopped, and a file whose text is not a
pid names no process (``-1`` would have been every process)."""

from __future__ import annotations

import subprocess
import threading

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


def test_a_pid_file_that_names_no_number_is_not_alive(tmp_path):
    pid_file = tmp_path / "service.pid"
    for text in ("", "-1\n", "1 2\n", "$(true)\n"):
        pid_file.write_text(text)
        assert lib('pid_alive "$1"', str(pid_file)).returncode == 1, repr(text)
