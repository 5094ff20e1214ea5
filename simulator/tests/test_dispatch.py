"""The rack's resident dispatcher answers the virtual commands as a new Python per call did
(byte for byte, exit codes included), their latency costs wall time, a command works with no
dispatcher running, and no dispatcher outlives its rack or the `serve` that started it."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator import dispatch, latency
from simulator.state import RackError

from .conftest import REPO

# (host, argv, stdin): reports, failures with exit 1, 2 and 13, a down-server-free set.
COMMANDS = [
    ("oss01", ["lctl", "get_param", "-n", "version"], None),
    ("oss01", ["lctl", "get_param", "no.such.param"], None),  # exit 2
    ("oss01", ["lnetctl", "frob"], None),  # exit 1
    ("oss01", ["multipath", "-ll"], None),
    ("oss01", ["corosync-cfgtool", "-s"], None),
    ("oss01", ["ipmitool", "sensor"], None),
    (None, ["SMcli", "-n", "ssu01-a", "-S", "-c", "show allDrives; show allVolumeGroups;"], None),
    (None, ["SMcli", "-n", "ssu01-a", "-S", "-c", "show"], None),  # exit 13
]


def _run(rack: Path, host: str | None, argv: list[str], stdin: bytes | None = None):
    bin_dir = rack / "hosts" / host / "bin" if host else rack / "bin"
    result = subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        input=stdin,
        capture_output=True,
        timeout=60,
        cwd=rack,
    )
    return result.returncode, result.stdout, result.stderr


@pytest.fixture
def dispatcher(built_rack):
    process = dispatch.start(built_rack)
    assert dispatch.answers(built_rack)
    yield process
    dispatch.stop(process)


def test_commands_through_the_dispatcher_answer_byte_for_byte_as_a_new_python(built_rack):
    assert not dispatch.answers(built_rack)
    direct = [_run(built_rack, host, argv, stdin) for host, argv, stdin in COMMANDS]
    assert {code for code, _, _ in direct} >= {0, 1, 2, 13}
    process = dispatch.start(built_rack)
    try:
        served = [_run(built_rack, host, argv, stdin) for host, argv, stdin in COMMANDS]
    finally:
        dispatch.stop(process)
    for (host, argv, _), one, other in zip(COMMANDS, direct, served, strict=True):
        assert one == other, f"{host}: {' '.join(argv)}"


def test_a_command_reading_stdin_gets_it_through_the_dispatcher(built_rack, dispatcher):
    code, cib, _ = _run(built_rack, "oss01", ["cibadmin", "--query"])
    assert code == 0 and b'epoch="' in cib
    epoch = int(cib.split(b'epoch="')[1].split(b'"')[0])
    newer = cib.replace(f'epoch="{epoch}"'.encode(), f'epoch="{epoch + 5}"'.encode(), 1)
    code, out, err = _run(built_rack, "oss01", ["cibadmin", "--replace", "--xml-pipe"], newer)
    assert (code, err) == (0, b"")
    _, cib, _ = _run(built_rack, "oss01", ["cibadmin", "--query"])
    assert int(cib.split(b'epoch="')[1].split(b'"')[0]) >= epoch + 5  # the piped CIB's
    # An older CIB is refused with the real tool's message and code.
    code, _, err = _run(built_rack, "oss01", ["cibadmin", "--replace", "--xml-pipe"], newer)
    assert code != 0 and b"older" in err


def test_the_dispatcher_runs_the_command_not_a_new_python(built_rack, dispatcher):
    # The client's fallback interpreter does not exist: only the dispatcher can answer.
    (client,) = (built_rack / "bin").glob(f"{dispatch.CLIENT_NAME}-*")
    env = dict(os.environ, OSTARA_RACK=str(built_rack), OSTARA_HOST="oss01")
    argv = [str(client), str(dispatch.socket_path(built_rack)), "/nonexistent/python", "lctl"]
    result = subprocess.run([*argv, "get_param", "-n", "version"], capture_output=True, env=env)
    assert (result.returncode, result.stdout) == (0, b"2.15.4\n")
    dispatch.stop(dispatcher)
    result = subprocess.run([*argv, "get_param", "-n", "version"], capture_output=True, env=env)
    assert result.returncode == 127  # the direct way, here impossible


def test_only_the_racks_owner_may_hand_the_dispatcher_a_command(built_rack, dispatcher):
    # Whoever connects runs commands as the rack's owner: the socket is the owner's alone.
    assert dispatch.socket_path(built_rack).stat().st_mode & 0o077 == 0


def test_a_command_works_with_no_dispatcher_or_a_dead_ones_socket(built_rack):
    dispatch.socket_path(built_rack).touch()  # left by a dispatcher killed with -9
    assert _run(built_rack, "oss01", ["lctl", "get_param", "-n", "version"])[:2] == (
        0,
        b"2.15.4\n",
    )


def test_latency_costs_wall_time_not_cpu(built_rack, dispatcher):
    latency.save(built_rack, latency.parse("lctl=0.6,ipmitool=5,ipmitool:chassis=0.1"))
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    assert _run(built_rack, "oss01", ["lctl", "get_param", "-n", "version"])[0] == 0
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert elapsed >= 0.6
    # The wait is a sleep in the dispatcher's child: the caller spent next to no CPU.
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 0.3
    started = time.monotonic()
    assert _run(built_rack, "oss01", ["ipmitool", "chassis", "power", "status"])[0] == 0
    assert time.monotonic() - started < 5  # the chassis rule wins over plain ipmitool
    latency.save(built_rack, latency.parse("none"))
    assert not (built_rack / latency.FILE).exists()


def test_latency_settings_name_the_bad_part():
    assert latency.parse("real")["SMcli"] >= 2
    assert latency.parse("SMcli=2.5, ipmitool=1") == {"SMcli": 2.5, "ipmitool": 1.0}
    with pytest.raises(RackError, match="'SMcli=slow'.*not a number"):
        latency.parse("SMcli=slow")
    with pytest.raises(RackError, match="NAME=SECONDS"):
        latency.parse("SMcli")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for every purpose but its parent's wait.
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _dispatcher_pid(rack: Path) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"simulator.dispatch" in cmdline and os.fsencode(str(rack)) in cmdline:
                return int(entry.name)
    return None


def _wait(predicate, seconds: float = 60.0) -> bool:
    """Until ``predicate()`` holds (a minute by default: serve's start renders the whole rack,
    which on a busy machine has taken more than 15 s)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_serve_starts_the_dispatcher_and_leaves_no_process_when_stopped(built_rack):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    serve = subprocess.Popen(
        [sys.executable, "-m", "simulator", "serve", "--rack", str(built_rack)]
        + ["--interval", "30", "--trees-in-place", "--latency", "SMcli=0.2"],
        env=env,
        stdout=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        assert _wait(lambda: dispatch.answers(built_rack))
        assert latency.load(built_rack) == {"SMcli": 0.2}
        pid = _dispatcher_pid(built_rack.resolve())
        assert pid is not None
        serve.send_signal(signal.SIGTERM)
        serve.wait(30)
        assert not _alive(pid)
        assert not dispatch.socket_path(built_rack).exists()
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_a_dispatcher_stops_when_its_rack_is_removed(built_rack, tmp_path):
    process = dispatch.start(built_rack)
    shutil.rmtree(built_rack)
    process.wait(15)  # it noticed by itself
    assert process.returncode == 0


def test_a_command_whose_caller_gave_up_is_stopped(built_rack, dispatcher):
    # A sensor's timeout kills the wrapper: the command it handed over stops too.
    latency.save(built_rack, {"lctl": 60})
    with pytest.raises(subprocess.TimeoutExpired):
        _run_with_timeout(built_rack, ["lctl", "get_param", "-n", "version"], 0.5)

    def children() -> list[str]:
        listing = subprocess.run(
            ["ps", "--ppid", str(dispatcher.pid), "-o", "pid="], capture_output=True, text=True
        )
        return listing.stdout.split()

    assert _wait(lambda: not children(), 30)


def _run_with_timeout(rack: Path, argv: list[str], seconds: float) -> None:
    subprocess.run(
        [str(rack / "hosts" / "oss01" / "bin" / argv[0]), *argv[1:]],
        capture_output=True,
        timeout=seconds,
    )


def test_without_a_c_compiler_the_python_client_hands_the_command_over(
    built_rack, dispatcher, monkeypatch
):
    monkeypatch.setattr(dispatch, "_compiled_client", lambda: None)
    wrapper = built_rack / "lctl-python-client"
    wrapper.write_text(dispatch.wrapper_text(built_rack, "oss01", "lctl", "lctl"))
    wrapper.chmod(0o755)
    assert "dispatch_client.py" in wrapper.read_text()
    result = subprocess.run([str(wrapper), "get_param", "-n", "version"], capture_output=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"2.15.4\n", b"")
    result = subprocess.run([str(wrapper), "get_param", "no.such.param"], capture_output=True)
    assert result.returncode == 2 and b"No such file or directory" in result.stderr
    # With no fallback interpreter, only the dispatcher can have answered.
    env = dict(os.environ, OSTARA_RACK=str(built_rack), OSTARA_HOST="oss01")
    client = [sys.executable, "-S", "-I", str(dispatch.PYTHON_CLIENT)]
    sock = str(dispatch.socket_path(built_rack))
    result = subprocess.run(
        [*client, sock, "/nonexistent/python", "lctl", "get_param", "-n", "version"],
        capture_output=True,
        env=env,
    )
    assert (result.returncode, result.stdout) == (0, b"2.15.4\n")
