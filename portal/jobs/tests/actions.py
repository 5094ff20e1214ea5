"""Step actions and job kinds used by the job tests. The actions record each run in a file
named by the job's params, so a test can tell which steps ran, and how often."""

from __future__ import annotations

import time
from pathlib import Path

from portal.jobs.registry import StepFailed, StepSpec, register
from portal.jobs.services import request_cancel
from portal.jobs.worker import StepRun


def _record(run: StepRun) -> None:
    with Path(run.job.params["record"]).open("a") as handle:
        handle.write(f"{run.step.name}\n")


def work(run: StepRun) -> None:
    _record(run)
    run.console.write(f"output of {run.step.name}")
    params = run.job.params
    if Path(params.get("broken", "/nonexistent")).exists() and run.step.name in params.get(
        "fail", []
    ):
        raise StepFailed(f"host oss02 unreachable during {run.step.name}")


def cancel_myself(run: StepRun) -> None:
    _record(run)
    run.job.refresh_from_db()
    request_cancel(run.job)


def crash(run: StepRun) -> None:
    _record(run)
    raise KeyError("volume_group")


def count_context(job) -> dict:
    """A context the steps share; counts how often it is computed."""
    with Path(job.params["record"]).open("a") as handle:
        handle.write("context\n")
    return {"pairs": [pair.name for pair in job.pairs.order_by("kind", "name")]}


def use_context(run: StepRun) -> None:
    _record(run)
    run.console.say(f"pairs {run.context['pairs']}")


THREE_STEPS = register(
    "test_three_steps",
    "Three steps",
    [StepSpec(name, name.title(), work) for name in ("preflight", "format", "mount")],
)
ONE_STEP = register("test_one_step", "One step", [StepSpec("preflight", "Preflight", work)])
TWO_STEPS = register("test_two_steps", "Two steps", [StepSpec(n, n.title(), work) for n in "ab"])
CRASH = register("test_crash", "Crash", [StepSpec("preflight", "Preflight", crash)])
CANCEL = register(
    "test_cancel",
    "Cancel",
    [StepSpec("preflight", "Preflight", cancel_myself), StepSpec("format", "Format", work)],
)
UNSAFE = register(
    "test_unsafe",
    "A step that must not run twice blindly",
    [
        StepSpec("preflight", "Preflight", work),
        StepSpec("format", "Format", work, idempotent=False),
        StepSpec("mount", "Mount", work),
    ],
)
SHARED = register(
    "test_shared",
    "Steps sharing a context",
    [StepSpec(name, name.title(), use_context) for name in ("one", "two", "three")],
    context=count_context,
)


def wait_for_release(run: StepRun) -> None:
    """A long step: runs until the file named by ``release`` exists (a test kills its worker
    meanwhile), at most two minutes."""
    _record(run)
    run.console.say("formatting")
    run.console.flush()
    release = Path(run.job.params["release"])
    deadline = time.monotonic() + 120
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.2)


LONG_STEP = register(
    "test_long_step",
    "A long step between two short ones",
    [
        StepSpec("preflight", "Preflight", work),
        StepSpec("format", "Format", wait_for_release),
        StepSpec("mount", "Mount", work),
    ],
)
