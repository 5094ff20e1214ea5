"""Jobs through a real Celery worker, and the pages people watch them on."""

from __future__ import annotations

import pytest

from portal.inventory.services import save_plans
from portal.inventory.tests.conftest import load_spec
from portal.jobs.choices import JobState
from portal.jobs.services import create_job, enqueue, wait_until_finished
from portal.jobs.tests.actions import ONE_STEP, TWO_STEPS
from portal.jobs.worker import run_job


@pytest.mark.django_db(transaction=True)
def test_a_queued_job_is_run_by_a_worker(celery_worker, tmp_path):
    job = create_job(ONE_STEP.kind, "Provision", params={"record": str(tmp_path / "ran.txt")})
    enqueue(job)  # outside a transaction: sent at once
    job = wait_until_finished(job, 60)
    assert job.state == JobState.SUCCEEDED
    assert (tmp_path / "ran.txt").read_text() == "preflight\n"


@pytest.mark.django_db
def test_the_job_page_shows_progress_and_the_failed_steps_output(client, world, tmp_path):
    (tmp_path / "broken").touch()
    job = create_job(
        TWO_STEPS.kind,
        "Provision ssu01",
        params={"record": str(tmp_path / "r"), "broken": str(tmp_path / "broken"), "fail": ["b"]},
    )
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
    job = create_job(TWO_STEPS.kind, "x")
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


@pytest.mark.django_db
def test_the_job_page_and_api_list_every_pair_and_the_error(client, world, tmp_path):
    pairs = save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
    (tmp_path / "broken").touch()
    job = create_job(
        TWO_STEPS.kind,
        "Provision mds01 and ssu01",
        pairs=pairs,
        params={"record": str(tmp_path / "r"), "broken": str(tmp_path / "broken"), "fail": ["a"]},
    )
    run_job(job.pk)
    client.login(username="viewer", password="pw-viewer-123!")
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Pairs: " in page and ">mds01</a>, <a" in page and ">ssu01</a>" in page
    assert "A: host oss02 unreachable during a" in page
    api = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert api["pairs"] == ["mds01", "ssu01"]
    assert (api["state"], api["error"]) == ("failed", "A: host oss02 unreachable during a")
