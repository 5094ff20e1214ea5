"""Creating, cancelling and retrying jobs; running them is ``portal.jobs.worker``.

A job's steps come from its kind in the registry (``portal.jobs.registry``); the Celery queue
carries only the job's id.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from pathlib import Path

import redis
from django.db import models, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from kombu.exceptions import OperationalError

from portal.jobs.choices import JobState, Mark, StepState
from portal.jobs.models import FINISHED_STATES, Job, Step, TransitionError, object_key
from portal.jobs.registry import UnknownJobKind, job_kind
from portal.jobs.tasks import run_job_task

logger = logging.getLogger(__name__)

# States a step may be left in by a run that stopped part-way through it.
_INTERRUPTED = (StepState.FAILED, StepState.ERRORED, StepState.RUNNING)


class RetryRefused(Exception):
    """A retry would run a step that is not idempotent again without anyone checking first."""


_MARK_KEY_RE = re.compile(r"^[a-z_]+:[0-9]+$")


def marks_for(how: str, *rows) -> dict[str, str]:
    """``Job.marks`` for these inventory rows: each acted on ``how`` (a ``Mark``)."""
    return {object_key(row): Mark(how).value for row in rows}


@transaction.atomic
def create_job(
    kind: str,
    title: str,
    *,
    params: dict | None = None,
    pairs: Iterable = (),
    user=None,
    marks: Mapping[str, str] | None = None,
) -> Job:
    """A pending job of a registered kind, with one step row per step of the kind.

    ``marks``: the objects it moves, stops or builds, which health shows
    "moving (job N)" or "being built (job N)" instead of alarming while it runs (``marks_for``)."""
    spec = job_kind(kind)
    marks = dict(marks or {})
    for key, how in marks.items():
        if not _MARK_KEY_RE.match(key) or how not in Mark.values:
            raise ValueError(f"marks: {key!r}: {how!r} is not an object key and a mark")
    job = Job.objects.create(
        kind=kind, title=title, params=params or {}, created_by=user, marks=marks
    )
    job.pairs.set(list(pairs))
    Step.objects.bulk_create(
        Step(
            job=job,
            position=position,
            name=step.name,
            title=step.title,
            idempotent=step.idempotent,
        )
        for position, step in enumerate(spec.steps, start=1)
    )
    return job


def marking_jobs(grace_seconds: float) -> list[Job]:
    """The jobs whose marks hold now, newest first: running (in a step that acts, not one that
    only watches), or finished less than ``grace_seconds`` ago (the sensors have not yet
    reported what it left). A pending job has touched nothing yet: only what it builds is
    marked, which has no colour of its own before it is built."""
    since = timezone.now() - timedelta(seconds=grace_seconds)
    jobs = (
        Job.objects.exclude(marks={})
        .filter(
            models.Q(state__in=[JobState.PENDING, JobState.RUNNING]) | models.Q(finished__gte=since)
        )
        .only("pk", "kind", "title", "marks", "state")
        .order_by("-created", "-pk")
    )
    holding = []
    for job in jobs:
        if job.state == JobState.PENDING:
            job.marks = {key: how for key, how in job.marks.items() if how == Mark.BUILDS}
        elif job.state == JobState.RUNNING and not _acting(job):
            continue
        if job.marks:
            holding.append(job)
    return holding


def _acting(job: Job) -> bool:
    """Whether the running step of a running job acts on its objects (not only watches)."""
    step = job.steps.filter(state=StepState.RUNNING).values_list("name", flat=True).first()
    try:
        return step is None or job_kind(job.kind).step(step).acts
    except UnknownJobKind:
        return True


def enqueue(job: Job) -> None:
    """Hand the job to a worker once the transaction that created it has committed."""
    transaction.on_commit(lambda: send(job.pk))


def send(job_id: int) -> bool:
    """Put a pending job's id on the queue and note when; False when Redis did not take it.

    The job then stays pending with ``queued`` empty, its page says so, and ``sweep_jobs``
    sends it once Redis answers again (a worker that starts, and beat, run the sweep).
    """
    try:
        # One attempt; the sweep is the retry. Measured: a page that starts a job answers in
        # 0.02 s while Redis refuses connections (6 s with retry=False, whose connection is
        # retried), and in 5 s, the broker's socket timeout (settings), while Redis hangs,
        # where each of Celery's default retries would wait that long again.
        run_job_task.apply_async((job_id,), retry_policy={"max_retries": 0})
    except (OperationalError, redis.RedisError, OSError) as error:
        logger.warning("job %s not queued, Redis did not take it: %s", job_id, error)
        return False
    Job.objects.filter(pk=job_id, state=JobState.PENDING).update(queued=timezone.now())
    return True


def sweep_jobs() -> dict[str, list[int]]:
    """Mend what a stopped worker or Redis left: returns the ids it interrupted and sent.

    A running job whose process is gone (killed, or the machine restarted) is marked
    interrupted, its step left as it stopped, so a retry resumes from that step (a step that
    is not idempotent waits for ``checked``). Workers run on the appliance itself, so the
    process is looked up in this machine's /proc; a process that started after the job was
    claimed has only been given the same pid (after a reboot, say). Then every pending job
    that Redis did not take is sent again.
    """
    interrupted = []
    for job in Job.objects.filter(state=JobState.RUNNING).order_by("pk"):
        if _runs_in_a_live_worker(job):
            continue
        step = job.steps.filter(state=StepState.RUNNING).first()
        where = f"during step {step.title!r}" if step else "between steps"
        try:
            job.transition_to(
                JobState.INTERRUPTED,
                unchanged=("worker_pid", "started"),
                error=f"worker {job.worker or '?'} (pid {job.worker_pid}) stopped {where}; "
                "a retry resumes from there",
            )
        except TransitionError:
            continue  # it finished, or was run again, meanwhile
        interrupted.append(job.pk)
    unsent = Job.objects.filter(state=JobState.PENDING, queued__isnull=True).order_by("pk")
    sent = [pk for pk in unsent.values_list("pk", flat=True) if send(pk)]
    if interrupted or sent:
        logger.warning(
            "jobs interrupted by a stopped worker: %s; sent again: %s", interrupted, sent
        )
    return {"interrupted": interrupted, "sent": sent}


def _runs_in_a_live_worker(job: Job) -> bool:
    """The Celery process that claimed the job still runs (and is the same process)."""
    if not job.worker_pid or job.started is None:
        return False
    process = Path(f"/proc/{job.worker_pid}")
    try:
        command = (process / "cmdline").read_bytes()  # empty for a zombie
        # Field 22 of stat is the start in clock ticks after boot; the name (field 2) may
        # hold spaces, so count from its closing parenthesis.
        ticks = int((process / "stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
    except (OSError, ValueError, IndexError, StopIteration):
        return False
    started = boot + ticks / os.sysconf("SC_CLK_TCK")
    return b"celery" in command and started <= job.started.timestamp() + 1


def wait_until_finished(job: Job, seconds: float) -> Job:
    """Poll until a worker has finished the job; ``TimeoutError`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.is_finished:
            return job
        time.sleep(0.2)
    raise TimeoutError(f"job {job.pk} still {job.state} after {seconds:.0f} s")


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


def unsafe_to_retry(job: Job) -> Step | None:
    """The non-idempotent step a retry would run again after it stopped part-way, if any."""
    return job.steps.filter(state__in=_INTERRUPTED, idempotent=False).first()


def retry(job: Job, *, checked: bool = False) -> Job:
    """Put a finished job back in the queue from its first unfinished step.

    A step that is not idempotent and stopped part-way (failed, errored, or left running by a
    dead worker) runs again only when someone says the hosts were ``checked``; otherwise
    ``RetryRefused`` names it. For a job that succeeded, every idempotent step runs again (a
    re-run checks the hosts and changes nothing that is already as planned); a non-idempotent
    step that succeeded has done its work and is not repeated.
    """
    unsafe = unsafe_to_retry(job)
    if unsafe is not None and not checked:
        raise RetryRefused(
            f"step {unsafe.title!r} is not idempotent and stopped part-way; check the hosts "
            "and confirm before running it again"
        )
    with transaction.atomic():
        job.transition_to(JobState.PENDING, cancel_requested=False, finished=None, queued=None)
        if not job.steps.exclude(state=StepState.SUCCEEDED).exists():
            job.steps.filter(idempotent=True).update(state=StepState.PENDING)
        else:
            job.steps.exclude(state=StepState.SUCCEEDED).update(state=StepState.PENDING)
        enqueue(job)
    return job


def prune_step_logs(before: datetime, *, batch_size: int = 500) -> tuple[int, int]:
    """Empty the logs and output of the steps of jobs that finished before ``before``, a batch
    of jobs at a time; returns how many jobs and steps were emptied.

    The job and step rows stay, with their states, times, error and outcome: the console's
    audit log refers to jobs, and the job page says when the logs went (``logs_pruned``). A
    job left part-way (a step failed, errored or still marked running) keeps its output: it is
    what the operator reads before a retry.
    """
    with_logs = Step.objects.filter(job=OuterRef("pk")).exclude(log="", output="")
    interrupted = Step.objects.filter(job=OuterRef("pk"), state__in=_INTERRUPTED)
    finished_before = {"state__in": FINISHED_STATES, "finished__lt": before}
    prunable = (
        Job.objects.filter(**finished_before)
        .filter(Exists(with_logs))
        .exclude(Exists(interrupted))
        .order_by()
    )
    jobs = steps = 0
    while batch := list(prunable.values_list("pk", flat=True)[:batch_size]):
        moment = timezone.now()
        with transaction.atomic():
            # Marked first, on the same conditions: a job retried since it was picked is left
            # alone, and a job whose steps are emptied always says so.
            marked = Job.objects.filter(pk__in=batch, **finished_before).update(logs_pruned=moment)
            steps += Step.objects.filter(job__in=batch, job__logs_pruned=moment).update(
                log="", output=""
            )
        if not marked:
            break
        jobs += marked
    return jobs, steps
