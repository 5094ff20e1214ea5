from __future__ import annotations

from django.db import models


class JobState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    ERRORED = "errored", "Errored"
    CANCELLED = "cancelled", "Cancelled"
    # Its worker stopped (killed, machine restarted) during a step; a retry resumes there.
    INTERRUPTED = "interrupted", "Interrupted"


class StepState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"  # the hosts said no (StepFailed)
    ERRORED = "errored", "Errored"  # an unexpected exception: a bug or an unforeseen condition
    CANCELLED = "cancelled", "Cancelled"


# The only moves a job may make; everything else is a bug or a race, refused by transition_to().
JOB_TRANSITIONS: dict[str, set[str]] = {
    JobState.PENDING: {JobState.RUNNING, JobState.CANCELLED},
    JobState.RUNNING: {
        JobState.SUCCEEDED,
        JobState.FAILED,
        JobState.ERRORED,
        JobState.CANCELLED,
        JobState.INTERRUPTED,
    },
    JobState.FAILED: {JobState.PENDING},  # retry
    JobState.ERRORED: {JobState.PENDING},  # retry once the cause is mended
    JobState.CANCELLED: {JobState.PENDING},  # retry after a cancel
    JobState.INTERRUPTED: {JobState.PENDING},  # retry from the step its worker stopped in
    JobState.SUCCEEDED: {JobState.PENDING},  # re-run: idempotent steps change nothing
}


class Mark(models.TextChoices):
    """How a job acts on an object it marks (``Job.marks``): what health shows meanwhile."""

    MOVES = "moves", "moves, stops or starts it"  # health: "moving (job N)", at most orange
    BUILDS = "builds", "builds it"  # health: "being built (job N)", grey
