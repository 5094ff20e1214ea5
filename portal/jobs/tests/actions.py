"""Step actions used by the job tests. They record each run in a file named by the job's
params, so a test can tell which steps ran, and how often."""

from __future__ import annotations

from pathlib import Path

from portal.jobs.services import StepFailed


def _record(job, step) -> None:
    with Path(job.params["record"]).open("a") as handle:
        handle.write(f"{step.name}\n")


def work(job, step, console) -> None:
    _record(job, step)
    console.write(f"output of {step.name}")
    if Path(job.params.get("broken", "/nonexistent")).exists() and step.name in job.params.get(
        "fail", []
    ):
        raise StepFailed(f"host oss02 unreachable during {step.name}")


def cancel_myself(job, step, console) -> None:
    from portal.jobs.services import request_cancel

    _record(job, step)
    job.refresh_from_db()
    request_cancel(job)


def crash(job, step, console) -> None:
    _record(job, step)
    raise KeyError("volume_group")
