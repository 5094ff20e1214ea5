"""Running a job: its registered steps in order, from the first that has not succeeded.

The runner checks for a cancel between steps, never inside one (a half-run mkfs is worse than
a late stop). A step that raises ``StepFailed`` fails the job (the hosts said no; the message
says why); any other exception errors it (a bug or an unexpected condition; the traceback is
kept in the step's output). Either way the job records the sentence in ``Job.error``.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from portal.jobs.choices import JobState, StepState
from portal.jobs.models import OUTPUT_LIMIT, Job, Step, TransitionError
from portal.jobs.registry import JobKindSpec, StepFailed, UnknownJobKind, job_kind

logger = logging.getLogger(__name__)

_UNSET = object()


class Console:
    """Collects a step's log and command output and saves them every second or so, so the job
    page shows the tail while the step runs."""

    FLUSH_SECONDS = 1.0

    def __init__(self, step: Step) -> None:
        self.step = step
        self._log = [step.log] if step.log else []
        self._output = [step.output] if step.output else []
        self._last_flush = time.monotonic()

    def say(self, message: str) -> None:
        """A line for people: what the step is doing."""
        stamp = timezone.localtime().strftime("%H:%M:%S")
        self._log.append(f"{stamp} {message}\n")
        self._output.append(f"# {message}\n")
        self._maybe_flush()

    def write(self, text: str) -> None:
        """Raw output of a command the step runs."""
        self._output.append(text if text.endswith("\n") else text + "\n")
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if time.monotonic() - self._last_flush >= self.FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        log = "".join(self._log)
        output = _clip("".join(self._output))
        Step.objects.filter(pk=self.step.pk).update(log=log, output=output)
        self.step.log, self.step.output = log, output
        self._last_flush = time.monotonic()


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    half = OUTPUT_LIMIT // 2
    return (
        f"{text[:half]}\n[... {len(text) - OUTPUT_LIMIT} characters left out ...]\n{text[-half:]}"
    )


@dataclass
class _Shared:
    """The kind's context for one run of a job: computed when a step first asks for it."""

    spec: JobKindSpec
    job: Job
    value: Any = field(default=_UNSET)

    def get(self) -> Any:
        if self.value is _UNSET:
            self.value = self.spec.context(self.job) if self.spec.context else None
        return self.value


@dataclass
class StepRun:
    """What a step's action gets: its job, its step row, its console and the shared context."""

    job: Job
    step: Step
    console: Console
    _shared: _Shared

    @property
    def context(self) -> Any:
        return self._shared.get()

    def report_progress(self, percent: float) -> None:
        """How far the step is (0-100), for a step that can tell: the job's progress on its
        page and in the API follows it instead of waiting for the step to end."""
        percent = max(0, min(100, int(percent)))
        Step.objects.filter(pk=self.step.pk).update(progress=percent)
        self.step.progress = percent


def run_job(job_id: int, worker: str = "", worker_pid: int | None = None) -> Job | None:
    """Run a pending job's steps in order, from the first that has not succeeded.

    ``worker`` and ``worker_pid`` name the Celery node and the process that claim the job, so
    a sweep can tell when that process is gone (``services.sweep_jobs``). Returns None when
    the job was not pending (another worker has it, or it was cancelled): duplicate deliveries
    end here.
    """
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.PENDING:
        logger.info("job %s is %s, not pending; nothing to do", job_id, job.state)
        return None
    try:
        job.transition_to(
            JobState.RUNNING,
            attempts=job.attempts + 1,
            error="",
            outcome="",
            worker=worker,
            worker_pid=worker_pid,
        )
    except TransitionError as error:
        logger.info("%s", error)
        return None
    try:
        spec = job_kind(job.kind)
    except UnknownJobKind as error:
        job.transition_to(JobState.ERRORED, error=str(error.args[0]))
        return job
    shared = _Shared(spec, job)

    for step in job.steps.exclude(state=StepState.SUCCEEDED).order_by("position"):
        if Job.objects.filter(pk=job.pk, cancel_requested=True).exists():
            job.steps.filter(state=StepState.PENDING).update(state=StepState.CANCELLED)
            job.transition_to(JobState.CANCELLED)
            return job
        state, message = _run_step(job, step, spec, shared)
        if state == StepState.FAILED:
            job.transition_to(JobState.FAILED, error=f"{step.title}: {message}")
            return job
        if state == StepState.ERRORED:
            job.transition_to(JobState.ERRORED, error=f"{step.title}: unexpected error: {message}")
            return job
    job.transition_to(JobState.SUCCEEDED)
    return job


def _run_step(job: Job, step: Step, spec: JobKindSpec, shared: _Shared) -> tuple[str, str]:
    Step.objects.filter(pk=step.pk).update(
        state=StepState.RUNNING, started=timezone.now(), finished=None, progress=None
    )
    step.state = StepState.RUNNING
    console = Console(step)
    console.say(f"{step.title}: started (attempt {job.attempts})")
    message = ""
    try:
        spec.step(step.name).action(StepRun(job, step, console, shared))
    except StepFailed as failure:
        message = str(failure)
        console.say(f"failed: {message}")
        state = StepState.FAILED
    except Exception as error:  # a bug or an unexpected condition: keep the details
        message = f"{type(error).__name__}: {error}"
        console.write(traceback.format_exc())
        console.say(f"failed with an unexpected error: {error}")
        state = StepState.ERRORED
    else:
        console.say(f"{step.title}: done")
        state = StepState.SUCCEEDED
    console.flush()
    Step.objects.filter(pk=step.pk).update(state=state, finished=timezone.now())
    step.state = state
    return state, message
