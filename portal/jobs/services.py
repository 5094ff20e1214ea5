"""Creating, running, cancelling and retrying jobs.

A step's action is a plain function ``action(job, step, console)`` named by its dotted path. It
writes what it does to ``console`` and raises ``StepFailed`` with a sentence when it cannot go
on; any other exception fails the step too, with its traceback in the output. The runner
checks for a cancel between steps, never inside one (a half-run mkfs is worse than a late stop).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from portal.jobs.choices import JobState, StepState
from portal.jobs.models import OUTPUT_LIMIT, Job, Step, TransitionError

logger = logging.getLogger(__name__)


class StepFailed(Exception):
    """A step could not do its work; the message says why, for the job page."""


@dataclass(frozen=True)
class StepSpec:
    name: str
    title: str
    action: str  # dotted path of the step function
    idempotent: bool = True


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


@transaction.atomic
def create_job(
    kind: str,
    title: str,
    steps: Iterable[StepSpec],
    *,
    params: dict | None = None,
    pair=None,
    user=None,
) -> Job:
    job = Job.objects.create(
        kind=kind, title=title, params=params or {}, pair=pair, created_by=user
    )
    Step.objects.bulk_create(
        Step(
            job=job,
            position=position,
            name=spec.name,
            title=spec.title,
            action=spec.action,
            idempotent=spec.idempotent,
        )
        for position, spec in enumerate(steps, start=1)
    )
    return job


def enqueue(job: Job) -> None:
    """Hand the job to a worker once the transaction that created it has committed."""
    from portal.jobs.tasks import run_job_task

    transaction.on_commit(lambda: run_job_task.delay(job.pk))


def run_job(job_id: int) -> Job | None:
    """Run a pending job's steps in order, from the first that has not succeeded.

    Returns None when the job was not pending (another worker has it, or it was cancelled):
    duplicate deliveries end here.
    """
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.PENDING:
        logger.info("job %s is %s, not pending; nothing to do", job_id, job.state)
        return None
    try:
        job.transition_to(JobState.RUNNING, attempts=job.attempts + 1)
    except TransitionError as error:
        logger.info("%s", error)
        return None

    for step in job.steps.exclude(state=StepState.SUCCEEDED).order_by("position"):
        if Job.objects.filter(pk=job.pk, cancel_requested=True).exists():
            job.steps.filter(state=StepState.PENDING).update(state=StepState.CANCELLED)
            job.transition_to(JobState.CANCELLED)
            return job
        if not _run_step(job, step):
            job.transition_to(JobState.FAILED)
            return job
    job.transition_to(JobState.SUCCEEDED)
    return job


def _run_step(job: Job, step: Step) -> bool:
    Step.objects.filter(pk=step.pk).update(
        state=StepState.RUNNING, started=timezone.now(), finished=None
    )
    step.state = StepState.RUNNING
    console = Console(step)
    console.say(f"{step.title}: started (attempt {job.attempts})")
    try:
        action: Callable = import_string(step.action)
        action(job, step, console)
    except StepFailed as failure:
        console.say(f"failed: {failure}")
        state = StepState.FAILED
    except Exception as error:  # a bug or an unexpected condition: keep the details
        console.write(traceback.format_exc())
        console.say(f"failed with an unexpected error: {error}")
        state = StepState.FAILED
    else:
        console.say(f"{step.title}: done")
        state = StepState.SUCCEEDED
    console.flush()
    Step.objects.filter(pk=step.pk).update(state=state, finished=timezone.now())
    step.state = state
    return state == StepState.SUCCEEDED


def request_cancel(job: Job) -> Job:
    """Cancel now if the job has not started; otherwise stop it before its next step."""
    if job.state == JobState.PENDING:
        try:
            job.transition_to(JobState.CANCELLED)
            job.steps.filter(state=StepState.PENDING).update(state=StepState.CANCELLED)
            return job
        except TransitionError:
            job.refresh_from_db()  # a worker claimed it meanwhile: ask it to stop
    if job.state == JobState.RUNNING:
        Job.objects.filter(pk=job.pk).update(cancel_requested=True)
        job.cancel_requested = True
    return job


def retry(job: Job) -> Job:
    """Put a failed, cancelled or finished job back in the queue from its first unfinished step.

    For a job that succeeded, every step runs again: the steps are idempotent, so a re-run
    checks the hosts and changes nothing that is already as planned.
    """
    with transaction.atomic():
        job.transition_to(JobState.PENDING, cancel_requested=False, finished=None)
        if not job.steps.exclude(state=StepState.SUCCEEDED).exists():
            job.steps.update(state=StepState.PENDING)
        else:
            job.steps.exclude(state=StepState.SUCCEEDED).update(state=StepState.PENDING)
        enqueue(job)
    return job
