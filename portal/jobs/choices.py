from __future__ import annotations

from django.db import models


class JobState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class StepState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class JobKind(models.TextChoices):
    PROVISION_PAIR = "provision_pair", "Provision a server pair"
    SURVEY = "survey", "obdfilter-survey"
    FAILBACK = "failback", "Failback"
    DRIVE_REPLACEMENT = "drive_replacement", "Drive replacement"
    MAINTENANCE = "maintenance", "Maintenance"


# The only moves a job may make; everything else is a bug or a race, refused by transition_to().
JOB_TRANSITIONS: dict[str, set[str]] = {
    JobState.PENDING: {JobState.RUNNING, JobState.CANCELLED},
    JobState.RUNNING: {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED},
    JobState.FAILED: {JobState.PENDING},  # retry
    JobState.CANCELLED: {JobState.PENDING},  # retry after a cancel
    JobState.SUCCEEDED: {JobState.PENDING},  # re-run: idempotent steps change nothing
}

BADGE_COLOURS = {
    JobState.PENDING: "grey",
    JobState.RUNNING: "blue",
    JobState.SUCCEEDED: "green",
    JobState.FAILED: "red",
    JobState.CANCELLED: "orange",
}
