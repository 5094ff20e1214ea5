"""The logs and output of old finished jobs are emptied; the jobs, their states and their pages
stay, and jobs that are still going or stopped part-way keep everything."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from portal.console.choices import Act, ObjectKind, Via
from portal.console.models import AuditEntry
from portal.jobs.choices import JobState, StepState
from portal.jobs.models import Job, Step
from portal.jobs.services import create_job, prune_step_logs
from portal.jobs.tests.actions import TWO_STEPS

pytestmark = pytest.mark.django_db

NOW = timezone.now()
CUTOFF = NOW - timedelta(days=90)


def job_with_logs(state: str, finished_days_ago: float | None, step_state: str) -> Job:
    """A job of two steps, each with a log and output, as a run would leave it."""
    job = create_job(TWO_STEPS.kind, f"Provision ssu01 ({state})")
    finished = NOW - timedelta(days=finished_days_ago) if finished_days_ago is not None else None
    Job.objects.filter(pk=job.pk).update(state=state, finished=finished)
    job.steps.update(
        state=step_state,
        log="12:00:01 formatting scratch-OST0000\n",
        output="mkfs.lustre --ost --index=0 /dev/mapper/ssu01-a-vg00\n",
    )
    job.refresh_from_db()
    return job


def has_logs(job: Job) -> bool:
    return job.steps.exclude(log="", output="").exists()


def test_an_old_finished_job_loses_its_logs_but_keeps_its_rows_and_states():
    old = job_with_logs(JobState.SUCCEEDED, 91, StepState.SUCCEEDED)
    recent = job_with_logs(JobState.SUCCEEDED, 89, StepState.SUCCEEDED)

    assert prune_step_logs(CUTOFF) == (1, 2)

    old.refresh_from_db()
    assert not has_logs(old)
    assert old.logs_pruned is not None
    assert old.state == JobState.SUCCEEDED
    assert list(old.steps.values_list("state", flat=True)) == [StepState.SUCCEEDED] * 2
    recent.refresh_from_db()
    assert has_logs(recent) and recent.logs_pruned is None
    assert prune_step_logs(CUTOFF) == (0, 0)  # nothing left to do the second time


def test_running_pending_and_interrupted_jobs_keep_their_logs():
    running = job_with_logs(JobState.RUNNING, None, StepState.RUNNING)
    pending = job_with_logs(JobState.PENDING, None, StepState.PENDING)
    # Stopped part-way long ago: the operator reads the output before retrying.
    failed = job_with_logs(JobState.FAILED, 200, StepState.FAILED)
    errored = job_with_logs(JobState.ERRORED, 200, StepState.ERRORED)
    # Started long ago and still running: finished is empty, so it is not old.
    Job.objects.filter(pk=running.pk).update(started=NOW - timedelta(days=200))

    assert prune_step_logs(CUTOFF) == (0, 0)

    for job in (running, pending, failed, errored):
        job.refresh_from_db()
        assert has_logs(job), job.title
        assert job.logs_pruned is None


def test_a_job_in_the_audit_log_stays_when_its_logs_go(world):
    job = job_with_logs(JobState.SUCCEEDED, 120, StepState.SUCCEEDED)
    entry = AuditEntry.objects.create(
        job=job,
        username="operator",
        via=Via.WEB,
        act=Act.FAILBACK,
        object_kind=ObjectKind.SERVER,
        object_name="oss01",
        summary="Failback of oss01",
    )

    prune_step_logs(CUTOFF)

    entry.refresh_from_db()
    assert entry.job == job
    assert Step.objects.filter(job=job).count() == 2


def test_jobs_are_emptied_a_batch_at_a_time_until_none_is_left():
    jobs = [job_with_logs(JobState.SUCCEEDED, 100 + n, StepState.SUCCEEDED) for n in range(5)]

    assert prune_step_logs(CUTOFF, batch_size=2) == (5, 10)

    assert not any(has_logs(job) for job in jobs)


def test_the_page_of_a_pruned_job_renders_and_says_the_logs_were_deleted(client, world):
    job = job_with_logs(JobState.SUCCEEDED, 120, StepState.SUCCEEDED)
    client.login(username="viewer", password="pw-viewer-123!")
    before = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "mkfs.lustre --ost" in before
    assert "logs and output were deleted" not in before

    prune_step_logs(CUTOFF)

    response = client.get(f"/jobs/{job.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "mkfs.lustre --ost" not in page
    assert "The steps' logs and output were deleted on" in page
    assert 'data-step="a" data-state="succeeded"' in page  # the steps are still listed
    api = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert api["logs_pruned"] is not None
    assert [step["output"] for step in api["steps"]] == ["", ""]
