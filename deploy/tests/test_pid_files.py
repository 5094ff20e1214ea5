"""deploy/lib.sh's pid files: the process a file was written for is stopped, and nothing else.

Pids are given again: this machine has 32,768 of them and a test run starts some 80,000
processes, so a pid file that outlived its process soon names another program's (a test's
sensor, another rack's collector). A file names its process only while that process runs: the
start written beside it (in clock ticks since boot, so a clock step changes nothing) must match.
A sensor's pid file, written by a playbook, names it only while it runs with its configuration.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def started(*command: str) -> subprocess.Popen:
    """A process of ours, reaped by a thread as its parent would (no zombie left)."""
    process = subprocess.Popen(command or ["sleep", "300"])
    threading.Thread(target=process.wait, daemon=True).start()
    return process


def stopped(process: subprocess.Popen) -> bool:
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        return False
    return True


def write_pid(pid_file, pid: int) -> None:
    assert lib('write_pid "$1" "$2"', str(pid_file), str(pid)).returncode == 0


def test_the_process_a_pid_file_was_written_for_is_stopped(tmp_path):
    process = started()
    pid_file = tmp_path / "service.pid"
    write_pid(pid_file, process.pid)
    assert pid_file.read_text() == f"{process.pid}\n"  # what other programs read: the pid
    done = lib('stop_pid "$1" service', str(pid_file))
    assert stopped(process) and process.returncode == -15, done.stderr
    assert "stopped service" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_pid_file_still_names_its_process_after_a_clock_step(tmp_path):
    process = started()
    try:
        pid_file = tmp_path / "service.pid"
        write_pid(pid_file, process.pid)
        for when in (0, 4_000_000_000):  # written in 1970, or in 2096
            os.utime(pid_file, (when, when))
            os.utime(tmp_path / "service.pid.start", (when, when))
            assert lib('pid_alive "$1"', str(pid_file)).returncode == 0, when
    finally:
        process.kill()


def test_a_pid_given_again_to_another_program_is_left_alone(tmp_path):
    gone = started("true")
    assert stopped(gone)
    pid_file = tmp_path / "service.pid"
    write_pid(pid_file, gone.pid)  # no start: the process has ended
    (tmp_path / "service.pid.start").write_text("12345\n")  # when the service started
    other = started()  # the program that has the pid now (here under another number)
    try:
        pid_file.write_text(f"{other.pid}\n")
        assert lib('pid_alive "$1"', str(pid_file)).returncode == 1
        done = lib('stop_pid "$1" service', str(pid_file))
        assert other.poll() is None, "another program was stopped"
        assert "stopped" not in done.stderr
        assert not pid_file.exists()
        # Nor is a program named by a pid file with no start beside it (another program's file).
        pid_file.write_text(f"{other.pid}\n")
        assert lib('pid_alive "$1"', str(pid_file)).returncode == 1
    finally:
        other.kill()


def test_a_pid_file_that_names_no_number_is_not_alive(tmp_path):
    pid_file = tmp_path / "service.pid"
    (tmp_path / "service.pid.start").write_text("1\n")
    for text in ("", "-1\n", "1 2\n", "$(true)\n"):
        pid_file.write_text(text)
        assert lib('pid_alive "$1"', str(pid_file)).returncode == 1, repr(text)
        assert lib('sensor_alive "$1" /dev/null', str(pid_file)).returncode == 1, repr(text)


def a_sensor(config) -> subprocess.Popen:
    """A process whose command line is the sensor program's with `config` (it only sleeps)."""
    return started(
        sys.executable, "-c", "import time; time.sleep(300)",
        "-m", "sensors", "run", "--config", str(config),
    )  # fmt: skip


def test_a_sensor_is_stopped_only_while_it_runs_with_its_configuration(tmp_path):
    mine, other = tmp_path / "mine.conf", tmp_path / "other.conf"
    mine.write_text("[sensor]\n")
    other.write_text("[sensor]\n")
    pid_file = tmp_path / "ostara-sensor.pid"
    another = a_sensor(other)  # another rack's sensor has the pid the file names
    try:
        pid_file.write_text(f"{another.pid}\n")
        assert lib('sensor_alive "$1" "$2"', str(pid_file), str(mine)).returncode == 1
        lib('stop_sensor "$1" "$2" sensor', str(pid_file), str(mine))
        assert another.poll() is None and not pid_file.exists()
    finally:
        another.kill()
    sensor = a_sensor(mine)
    pid_file.write_text(f"{sensor.pid}\n")
    # The same file by another path is the same configuration.
    link = tmp_path / "link.conf"
    link.symlink_to(mine)
    assert lib('sensor_alive "$1" "$2"', str(pid_file), str(link)).returncode == 0
    done = lib('stop_sensor "$1" "$2" "the sensor"', str(pid_file), str(mine))
    assert stopped(sensor) and sensor.returncode == -15, done.stderr
    assert "stopped the sensor" in done.stderr and not pid_file.exists()
