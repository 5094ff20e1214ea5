"""The array collector's play (collector.yml) run for real by the sensor step. On a real
appliance it only writes the collector's files, as the production worker's unprivileged user
can (every file but the run directory read-only, as its unit makes them): no systemd, /etc or
/opt. On the virtual rack it also starts the collector, trusting a pid file only when its
process is our collector, and never restarts it: the collector follows its files itself."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deploy.tests.conftest import read_only_but
from portal.inventory import provisioning
from portal.inventory.models import StorageArray
from portal.inventory.provisioning import run_sensor_step
from portal.inventory.services import save_plans
from portal.inventory.tests.test_array_collector import (
    MONITOR_PASSWORD,
    monitor,
    sensor_step,
    with_management,
)
from provisioning.runner import PlaybookResult, run_playbook
from sensors.config import load_config

pytestmark = [pytest.mark.django_db, pytest.mark.rack(seconds=20)]

REPO = Path(__file__).resolve().parents[3]
PLAY_IN_A_PROCESS = """
import dataclasses, json, sys
from pathlib import Path
from provisioning.runner import run_playbook
call = json.load(sys.stdin)
output = []
result = run_playbook(call["playbook"], call["inventory"], call["extravars"],
                      work_dir=Path(call["work_dir"]), on_output=output.append,
                      secrets=call["secrets"])
json.dump({"result": dataclasses.asdict(result), "output": output}, sys.stdout)
"""


def worker_home(run_dir: Path) -> dict[str, str]:
    """The environment of the worker's user, whose home is the run directory: ansible's
    temporary files go there (PrivateTmp gives it a /tmp of its own: here a directory)."""
    ansible_tmp = str(run_dir / ".ansible" / "tmp")
    return {
        "HOME": str(run_dir),
        "ANSIBLE_LOCAL_TEMP": ansible_tmp,
        "ANSIBLE_REMOTE_TEMP": ansible_tmp,
        "TMPDIR": str(run_dir / "tmp"),
    }


@pytest.fixture
def playbooks(monkeypatch, settings) -> list[str]:
    """collector.yml run for real (on a real appliance, as the worker's unit lets it: only the
    run directory writable); sensor.yml, which needs the rack's servers, only recorded."""
    runs: list[str] = []

    def run(playbook, inventory, extravars=None, *, work_dir, on_output, secrets, **kwargs):
        runs.append(playbook)
        if playbook != "collector.yml":
            return PlaybookResult(playbook, "successful", 0, ok={"localhost": 1})
        if settings.VIRTUAL_RACK is not None:
            return run_playbook(
                playbook, inventory, extravars, work_dir=work_dir, on_output=on_output,
                secrets=secrets, **kwargs,
            )  # fmt: skip
        run_dir = settings.RUN_DIR
        (run_dir / "tmp").mkdir(parents=True, exist_ok=True)
        call = {
            "playbook": playbook, "inventory": inventory, "extravars": extravars,
            "work_dir": str(work_dir), "secrets": secrets,
        }  # fmt: skip
        done = subprocess.run(
            [*read_only_but(run_dir), sys.executable, "-c", PLAY_IN_A_PROCESS],
            input=json.dumps(call),
            cwd=REPO,
            env={**os.environ, **worker_home(run_dir)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        for line in answer["output"]:
            on_output(line)
        return PlaybookResult(**answer["result"])

    monkeypatch.setattr(provisioning, "run_playbook", run)
    return runs


@pytest.fixture
def appliance(settings, tmp_path):
    """An appliance whose run directory is the test's (the credentials key in it too), the
    collector's directory left to its default."""
    settings.RUN_DIR = tmp_path / "run"
    settings.ANSIBLE_WORK_DIR = settings.RUN_DIR / "ansible"
    settings.OSTARA_ARRAYS_DIR = ""
    settings.OSTARA_ARRAY_CA_FILE = ""
    settings.VIRTUAL_RACK = None
    return settings


@pytest.fixture
def arrays(appliance, filesystem_with_mds, ssu_spec):
    """The SSU's two arrays read through their REST API, certificates pinned, controllers
    silent (the step says so and goes on; the collector reports them)."""
    spec = with_management(ssu_spec, ["127.0.0.1:1", "127.0.0.1:2"], ["127.0.0.1:3", "127.0.0.1:4"])
    pairs = save_plans([spec], monitor_credentials=monitor(spec))
    StorageArray.objects.update(certificate_a_sha256="ab" * 32, certificate_b_sha256="cd" * 32)
    return pairs


def tasks_run(output: str) -> list[str]:
    """The tasks that did something on the appliance (ok or changed, not skipped)."""
    done, task = [], None
    for line in output.splitlines():
        if line.startswith("TASK ["):
            task = line[len("TASK [") : line.index("]")]
        elif task and line.startswith(("ok:", "changed:")) and task not in done:
            done.append(task)
    return done


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def test_on_a_real_appliance_the_play_only_writes_the_collectors_files_under_the_run_directory(
    settings, playbooks, arrays
):
    run = sensor_step(arrays)
    run_sensor_step(run)
    run.console.flush()
    assert playbooks == ["collector.yml", "sensor.yml"]

    collector = settings.RUN_DIR / "arrays"
    assert tasks_run(run.step.output) == [
        "Directories for the configuration and the spool",
        "Each array's monitor password",
        "The password files there are",
        "The collector's configuration",
    ], run.step.output
    assert "collector.yml: ok on 1 host(s), 3 change(s)" in run.step.log
    assert sorted(p.name for p in collector.iterdir()) == [
        "collector.conf",
        "spool",
        "ssu01-a.password",
        "ssu01-b.password",
    ]
    assert (mode(collector), mode(collector / "spool")) == ("0o700", "0o700")
    for name in ("collector.conf", "ssu01-a.password", "ssu01-b.password"):
        assert mode(collector / name) == "0o600", name
    assert (collector / "ssu01-a.password").read_text() == MONITOR_PASSWORD + "\n"
    # What ostara-arrays.service reads: the arrays, the password files and spool beside it.
    config = load_config(collector / "collector.conf")
    assert [a.name for a in config.santricity_arrays] == ["ssu01-a", "ssu01-b"]
    assert {a.password for a in config.santricity_arrays} == {MONITOR_PASSWORD}
    assert config.spool_dir == str(collector / "spool")

    # No array read through its API any more: the files go, the collector stops by itself.
    StorageArray.objects.update(management_a="", management_b="")
    run = sensor_step(arrays)
    run_sensor_step(run)
    run.console.flush()
    assert sorted(p.name for p in collector.iterdir()) == ["spool"]
    assert "Each array's monitor password" not in tasks_run(run.step.output)


def _collector_pid(collector: Path) -> int:
    return int((collector / "collector.pid").read_text())


def _runs_our_collector(pid: int, collector: Path) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    config = os.fsencode(collector / "collector.conf")
    return cmdline[1:6] == [b"-m", b"sensors", b"run", b"--config", config]


def test_on_the_virtual_rack_the_play_starts_the_collector_once_and_it_follows_its_files(
    settings, playbooks, arrays, tmp_path
):
    settings.VIRTUAL_RACK = tmp_path / "rack"
    settings.VIRTUAL_RACK.mkdir()
    settings.OSTARA_ARRAY_INTERVAL = 1
    settings.INFLUXDB_URL = "http://127.0.0.1:1"  # nothing answers: its points are spooled
    collector = settings.VIRTUAL_RACK / "arrays-collector"
    collector.mkdir()
    # A pid file left by a collector long gone, its pid now another program's.
    other = subprocess.Popen(["sleep", "120"])
    (collector / "collector.pid").write_text(f"{other.pid}\n")
    try:
        run_sensor_step(sensor_step(arrays))
        started = _collector_pid(collector)
        assert started != other.pid and other.poll() is None  # not trusted, not killed
        assert _runs_our_collector(started, collector)
        # In a session of its own: the SIGTERM ansible sends to the process group of a worker
        # still running at the play's end does not reach it.
        assert os.getsid(started) == started

        # A new monitor password: written, and the collector takes it without being restarted.
        for array in StorageArray.objects.all():
            array.set_monitor_password("another monitor-Secret")
            array.save()
        run = sensor_step(arrays)
        run_sensor_step(run)
        run.console.flush()
        assert "Start the virtual rack's collector" not in tasks_run(run.step.output)
        assert _collector_pid(collector) == started
        log = collector / "collector.log"
        deadline = time.monotonic() + 30
        while "changed: starting again with it" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert _runs_our_collector(started, collector)

        # No array left to read: the files go and the collector stops by itself.
        StorageArray.objects.update(management_a="", management_b="")
        run_sensor_step(sensor_step(arrays))
        assert not (collector / "collector.conf").exists()
        assert not list(collector.glob("*.password"))
        deadline = time.monotonic() + 30
        while _runs_our_collector(started, collector):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert "is gone: stopping" in log.read_text()
    finally:
        other.kill()
        other.wait()
        pid = (collector / "collector.pid").read_text().strip()
        if pid.isdigit() and _runs_our_collector(int(pid), collector):
            os.kill(int(pid), 15)
