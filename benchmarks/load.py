"""The background load of `make bench`: the demo as `make demo` starts it (deploy/demo.sh), in a
run directory of the benchmark's own (.run/bench/load) on free loopback ports.

That is the demo's virtual rack serving its scenario, the MDS pair and the first SSU built by
the demo's provisioning job, the sensors provisioning starts on them and the array collector,
a Celery worker and beat running the health and alert rounds, and the idle portal: what runs
beside the portal on a demo-sized appliance. The benchmarks measure with it running. The rack's
clusters are the imitation (DEMO_REAL_CLUSTERS=no unless set otherwise): real ones need root
and most of a gigabyte.

Every start begins from a new run directory, so every session has the same load; ``stop``
(deploy/demo.sh stop) ends every process the demo started, and runs in a session of its own so
that a second Ctrl-C does not cut it short.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from benchmarks.common import REPO, free_port, say

RUN_DIR = REPO / ".run" / "bench" / "load"
BUILD_LIMIT_SECONDS = 900
# The demo's first build: these hosts get sensors once its job has succeeded.
DEMO_BUILD = ("1-mds01.json", "2-ssu01.json")


class BackgroundLoad:
    def __init__(self, run_dir: Path = RUN_DIR, repo: Path = REPO) -> None:
        self.run_dir = run_dir
        self.repo = repo
        self.log = run_dir.parent / "load.log"
        self.env: dict[str, str] = {}
        self.build = "not started"
        self.summary = "not started"

    def _demo(self, action: str, **kwargs) -> subprocess.CompletedProcess:
        with open(self.log, "a") as log:
            return subprocess.run(
                [str(self.repo / "deploy" / "demo.sh"), action],
                cwd=self.repo,
                env=self.env,
                stdout=log,
                stderr=log,
                **kwargs,
            )

    def start(self) -> None:
        if self.run_dir.exists():
            self.env = self._environment(keep_ports=True)
            self._demo("stop", start_new_session=True)  # what an earlier session left
            shutil.rmtree(self.run_dir)
        self.run_dir.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        self.env = self._environment()
        say(f"background load: starting the demo in {self.run_dir} (log: {self.log})")
        if self._demo("start").returncode != 0:
            raise RuntimeError(f"the background load did not start; see {self.log}")
        self.build = self._wait_for_build()
        self.summary = self.describe()
        say(f"background load: {self.summary}")

    def _environment(self, keep_ports: bool = False) -> dict[str, str]:
        env = dict(os.environ, OSTARA_RUN_DIR=str(self.run_dir))
        env.setdefault("DEMO_REAL_CLUSTERS", "no")
        env.pop("OSTARA_VIRTUAL_RACK", None)  # the demo's default: in its run directory
        if not keep_ports:
            for name in ("REDIS", "INFLUXDB", "INFLUXDB_RPC", "PORTAL", "SMTP"):
                env[f"OSTARA_{name}_PORT"] = str(free_port())
        return env

    def _wait_for_build(self) -> str:
        """The demo's first build (its provisioning job) finished: the state it ended in."""
        marker = self.run_dir / "demo-build-job"
        if not marker.exists():
            return "no build (see the log)"
        job = int(marker.read_text())
        deadline = time.monotonic() + BUILD_LIMIT_SECONDS
        state = "pending"
        while time.monotonic() < deadline:
            state = self._job_state(job)
            if state not in ("pending", "running"):
                return state
            time.sleep(10)
        return f"still {state} after {BUILD_LIMIT_SECONDS} s"

    def _job_state(self, job: int) -> str:
        # Through deploy/lib.sh's load_profile, as demo.sh reaches the demo's database.
        script = (
            "source deploy/lib.sh && load_profile demo && exec .venv/bin/python manage.py "
            'shell -c "from portal.jobs.models import Job; print(Job.objects.get(pk=$JOB).state)"'
        )
        found = subprocess.run(
            ["bash", "-c", script],
            cwd=self.repo,
            env=dict(self.env, JOB=str(job)),
            capture_output=True,
            text=True,
        )
        # The last line: Django's shell may first say what it imported.
        lines = found.stdout.strip().splitlines()
        return lines[-1].strip() if lines else "unknown"

    def sensors(self) -> int:
        """How many of the demo's sensors (and array collector) are running."""
        running = 0
        for pidfile in [
            *self.run_dir.glob("rack/hosts/*/run/ostara-sensor.pid"),
            self.run_dir / "rack" / "arrays-collector" / "collector.pid",
        ]:
            try:
                os.kill(int(pidfile.read_text()), 0)
                running += 1
            except (OSError, ValueError):
                continue
        return running

    def describe(self) -> str:
        return (
            f"the demo's virtual rack, {self.sensors()} sensors running, a Celery worker and beat "
            f"(its build of {' and '.join(DEMO_BUILD)}: {self.build})"
        )

    def stop(self) -> None:
        if not self.env:
            return
        say("background load: stopping the demo")
        self._demo("stop", start_new_session=True)
