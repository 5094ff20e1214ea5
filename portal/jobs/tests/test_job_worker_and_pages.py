"""Jobs through a real Celery worker, and the pages people watch them on."""

from __future__ import annotations

import time

import pytest

from portal.jobs.choices import JobKind, JobState
from portal.jobs.models import Job
from portal.jobs.services import StepSpec, create_job, enqueue


def _wait_until_finished(job: Job, seconds: float = 60) -> Job:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.is_finished:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job.pk} still {job.state} after {seconds} s")


@pytest.mark.django_db(transaction=True)
def test_a_queued_job_is_run_by_a_worker(celery_worker, tmp_path):
    steps = [StepSpec("preflight", "Preflight", "portal.jobs.tests.actions.work")]
    job = create_job(
        JobKind.PROVISION_PAIR, "Provision", steps, params={"record": str(tmp_path / "ran.txt")}
    )
    enqueue(job)  # outside a transaction: sent at once
    job = _wait_until_finished(job)
    assert job.state == JobState.SUCCEEDED
    assert (tmp_path / "ran.txt").read_text() == "preflight\n"


@pytest.mark.django_db
def test_the_job_page_shows_progress_and_the_failed_steps_output(client, world, tmp_path):
    (tmp_path / "broken").touch()
    steps = [StepSpec(n, n.title(), "portal.jobs.tests.actions.work") for n in ("a", "b")]
    job = create_job(
        JobKind.PROVISION_PAIR,
        "Provision ssu01",
        steps,
        params={"record": str(tmp_path / "r"), "broken": str(tmp_path / "broken"), "fail": ["b"]},
    )
    from portal.jobs.services import run_job

    run_job(job.pk)
    client.login(username="viewer", password="pw-viewer-123!")
    page = client.get(f"/jobs/{job.pk}/progress/").content.decode()
    assert 'value="50"' in page
    assert "host oss02 unreachable during b" in page
    assert "Retry from the failed step" not in page  # viewers may not retry
    client.login(username="operator", password="pw-operator-123!")
    page = client.get(f"/jobs/{job.pk}/progress/").content.decode()
    assert "Retry from the failed step" in page


@pytest.mark.django_db
def test_a_viewer_cannot_cancel_or_retry(client, world, tmp_path):
    job = create_job(JobKind.PROVISION_PAIR, "x", [StepSpec("a", "A", "x.y")])
    client.login(username="viewer", password="pw-viewer-123!")
    assert client.post(f"/jobs/{job.pk}/cancel/").status_code == 403
    job.refresh_from_db()
    assert job.state == JobState.PENDING


def test_jobs_sent_from_a_web_server_thread_go_to_the_configured_broker(settings):
    """gunicorn and the live server send jobs from their own threads; Celery's fallback app
    there would try AMQP on localhost and the wizard's confirm would fail."""
    import threading

    from portal.jobs.tasks import run_job_task

    seen = []
    thread = threading.Thread(target=lambda: seen.append(run_job_task.app.conf.broker_url))
    thread.start()
    thread.join()
    assert seen == [settings.CELERY_BROKER_URL]
    assert seen[0].startswith("redis://")
