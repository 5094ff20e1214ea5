"""A job runs its steps in order, fails at the step that fails, and resumes there on retry."""

from __future__ import annotations

import pytest

from portal.jobs.choices import JobState, StepState
from portal.jobs.models import Job, TransitionError
from portal.jobs.services import RetryRefused, create_job, request_cancel, retry
from portal.jobs.tests.actions import CANCEL, CRASH, SHARED, THREE_STEPS, UNSAFE
from portal.jobs.worker import run_job

pytestmark = pytest.mark.django_db


def _job(tmp_path, kind=THREE_STEPS, **params) -> Job:
    params.setdefault("record", str(tmp_path / "ran.txt"))
    params.setdefault("broken", str(tmp_path / "broken"))
    return create_job(kind.kind, "Provision ssu01", params=params)


def _ran(tmp_path) -> list[str]:
    path = tmp_path / "ran.txt"
    return path.read_text().split() if path.exists() else []


def test_steps_run_in_order_and_the_job_succeeds(tmp_path):
    job = _job(tmp_path)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED
    assert _ran(tmp_path) == ["preflight", "format", "mount"]
    assert list(job.steps.values_list("state", flat=True)) == [StepState.SUCCEEDED] * 3
    assert "output of format" in job.steps.get(name="format").output
    assert job.progress_percent == 100
    assert job.started <= job.finished


def test_a_failing_step_fails_the_job_with_its_output_and_stops_there(tmp_path):
    (tmp_path / "broken").touch()
    job = _job(tmp_path, fail=["format"])
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED
    states = dict(job.steps.values_list("name", "state"))
    assert states == {"preflight": "succeeded", "format": "failed", "mount": "pending"}
    failed = job.steps.get(name="format")
    assert "host oss02 unreachable during format" in failed.output
    assert "failed: host oss02 unreachable" in failed.log


def test_retry_resumes_from_the_failed_step_once_the_host_is_back(
    tmp_path, django_capture_on_commit_callbacks
):
    (tmp_path / "broken").touch()
    job = _job(tmp_path, fail=["format"])
    run_job(job.pk)
    (tmp_path / "broken").unlink()  # the host is back
    job.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        retry(job)
    assert len(callbacks) == 1  # handed to a worker after commit
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED
    assert job.attempts == 2
    # preflight ran once; format twice (failed, then fine); mount once.
    assert _ran(tmp_path) == ["preflight", "format", "format", "mount"]


def test_an_unexpected_error_errors_the_step_with_the_traceback(tmp_path):
    # An exception other than StepFailed is a bug or an unforeseen condition: "errored", kept
    # apart from a step the hosts refused ("failed").
    job = _job(tmp_path, kind=CRASH)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.ERRORED
    step = job.steps.get()
    assert step.state == StepState.ERRORED
    assert "Traceback" in step.output and "KeyError: 'volume_group'" in step.output
    assert job.error == "Preflight: unexpected error: KeyError: 'volume_group'"


def test_cancel_before_start_cancels_at_once(tmp_path):
    job = _job(tmp_path)
    request_cancel(job)
    assert run_job(job.pk) is None
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    assert _ran(tmp_path) == []
    assert set(job.steps.values_list("state", flat=True)) == {StepState.CANCELLED}


def test_cancel_while_running_stops_before_the_next_step(tmp_path):
    job = create_job(CANCEL.kind, "Provision", params={"record": str(tmp_path / "ran.txt")})
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    assert _ran(tmp_path) == ["preflight"]  # the running step finished; the next never began
    assert job.steps.get(name="format").state == StepState.CANCELLED


def test_a_second_delivery_of_the_same_job_does_nothing(tmp_path):
    job = _job(tmp_path)
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING)  # another worker has it
    assert run_job(job.pk) is None
    assert _ran(tmp_path) == []


def test_transitions_are_checked_against_the_state_in_the_database(tmp_path):
    job = _job(tmp_path)
    stale = Job.objects.get(pk=job.pk)
    job.transition_to(JobState.RUNNING)
    with pytest.raises(TransitionError, match="expected pending, found running"):
        stale.transition_to(JobState.RUNNING)
    with pytest.raises(TransitionError, match="running -> pending is not allowed"):
        job.transition_to(JobState.PENDING)


def test_a_finished_job_runs_every_step_again(tmp_path, django_capture_on_commit_callbacks):
    job = _job(tmp_path)
    run_job(job.pk)
    job.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=False):
        retry(job)
    run_job(job.pk)
    assert _ran(tmp_path) == ["preflight", "format", "mount"] * 2


def test_a_failed_job_records_its_error_and_a_retry_clears_it(
    tmp_path, django_capture_on_commit_callbacks
):
    (tmp_path / "broken").touch()
    job = _job(tmp_path, fail=["format"])
    run_job(job.pk)
    job.refresh_from_db()
    assert job.error == "Format: host oss02 unreachable during format"
    (tmp_path / "broken").unlink()
    with django_capture_on_commit_callbacks(execute=False):
        retry(job)
    run_job(job.pk)
    job.refresh_from_db()
    assert (job.state, job.error) == (JobState.SUCCEEDED, "")


def test_a_non_idempotent_step_that_failed_is_retried_only_once_checked(
    tmp_path, django_capture_on_commit_callbacks
):
    (tmp_path / "broken").touch()
    job = _job(tmp_path, kind=UNSAFE, fail=["format"])
    run_job(job.pk)
    job.refresh_from_db()
    (tmp_path / "broken").unlink()
    with pytest.raises(RetryRefused, match="'Format' is not idempotent"):
        retry(job)
    job.refresh_from_db()
    assert job.state == JobState.FAILED  # nothing queued
    with django_capture_on_commit_callbacks(execute=False):
        retry(job, checked=True)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED
    assert _ran(tmp_path) == ["preflight", "format", "format", "mount"]
    # Run again: the idempotent steps check the hosts; the mkfs-like step is not repeated.
    with django_capture_on_commit_callbacks(execute=False):
        retry(job)
    run_job(job.pk)
    assert _ran(tmp_path)[4:] == ["preflight", "mount"]


def test_the_kinds_context_is_computed_once_per_run(tmp_path):
    job = _job(tmp_path, kind=SHARED)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED
    assert _ran(tmp_path) == ["one", "context", "two", "three"]  # when first asked for
