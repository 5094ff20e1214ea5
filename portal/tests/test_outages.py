"""The appliance through outages of its own services, with a real Celery worker and beat, Redis
and InfluxDB running as in the demo, and the portal behind a real HTTP server (the live server):
one service is stopped (or the worker killed), the pages and /healthz are checked, the service
comes back, and nothing is lost or done twice.

The sensors' spool and replay over an InfluxDB outage are sensors/tests/test_influxdb_outage.py;
alert mail over an SMTP outage is portal/alerts/tests/test_alert_mail_outbox.py.
"""

from __future__ import annotations

import os
import re
import signal
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.utils import timezone

from portal import influxdb as influx
from portal.conftest import CeleryWorkerProcess, celery_beat, run_services_script
from portal.inventory.services import save_plans
from portal.inventory.tests.conftest import load_spec
from portal.jobs.choices import JobState, StepState
from portal.jobs.models import Job
from portal.jobs.services import create_job, enqueue, sweep_jobs, wait_until_finished
from portal.jobs.tests.actions import LONG_STEP, ONE_STEP

pytestmark = pytest.mark.django_db(transaction=True)

SWEEP_SECONDS = 2
# Pages every role opens, their periodic refreshes and a chart's data.
PAGES = (
    "/",
    "/health/overview/",
    "/health/services/",
    "/health/charts/throughput/?kind=filesystem&name=scratch",
    "/jobs/",
    "/ssus/",
    "/alerts/",
    "/analytics/load/",
)


@pytest.fixture(scope="module")
def beat(tmp_path_factory, services):
    """Beat as in the demo, sweeping jobs every SWEEP_SECONDS instead of every minute."""
    schedule = tmp_path_factory.mktemp("beat") / "schedule"
    with celery_beat(schedule, OSTARA_JOB_SWEEP_SECONDS=str(SWEEP_SECONDS)) as process:
        yield process


class Portal:
    """The portal over HTTP as an operator's browser uses it: a session cookie, a CSRF token."""

    def __init__(self, url: str, session_id: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.cookies.set("sessionid", session_id)

    def get(self, path: str) -> requests.Response:
        return self.session.get(self.url + path, allow_redirects=False, timeout=60)

    def post(self, path: str) -> requests.Response:
        if "csrftoken" not in self.session.cookies:
            self.get("/jobs/")  # a page with a form sets it
        token = self.session.cookies["csrftoken"]
        return self.session.post(
            self.url + path,
            data={"csrfmiddlewaretoken": token},
            allow_redirects=False,
            timeout=60,
        )

    def healthz(self) -> dict:
        return self.get("/healthz").json()


@pytest.fixture
def operator(live_server, client, world) -> Portal:
    """An operator logged in, and the rack's first SSU and MDS pair in the inventory."""
    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
    influx.ensure_database()
    client.login(username="operator", password="pw-operator-123!")
    return Portal(live_server.url, client.cookies["sessionid"].value)


def _wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what} within {seconds:.0f} s")


def _healthz_down(portal: Portal) -> list[str]:
    return portal.healthz()["down"]


def _finished_job(tmp_path: Path, name: str) -> Job:
    """A job that already ran once, so the operator can run it again from its page."""
    job = create_job(ONE_STEP.kind, f"Survey {name}", params={"record": str(tmp_path / name)})
    enqueue(job)
    job = wait_until_finished(job, 60)
    assert job.state == JobState.SUCCEEDED
    return job


def _long_job(record: Path, release: Path) -> Job:
    """A job whose second step runs until ``release`` exists; returned once that step runs."""
    job = create_job(
        LONG_STEP.kind,
        "Provision ssu01",
        params={"record": str(record), "release": str(release)},
    )
    enqueue(job)
    _wait_for(
        lambda: job.steps.filter(name="format", state=StepState.RUNNING).exists(),
        60,
        "the worker did not start the long step",
    )
    return job


def test_a_worker_killed_mid_step_leaves_the_job_interrupted_and_resumable_from_that_step(
    operator, celery_worker_process, celery_worker, beat, tmp_path
):
    record, release = tmp_path / "ran", tmp_path / "release"
    job = _long_job(record, release)

    celery_worker_process.kill()
    job.refresh_from_db()
    assert job.state == JobState.RUNNING  # nobody can know yet

    celery_worker_process.start()  # the same node name, as after a reboot
    job = _wait_for(
        lambda: Job.objects.filter(pk=job.pk, state=JobState.INTERRUPTED).first(),
        20,
        "the job was not marked interrupted after its worker restarted",
    )
    assert celery_worker in job.error and "'Format'" in job.error
    states = dict(job.steps.values_list("name", "state"))
    assert states == {
        "preflight": StepState.SUCCEEDED,
        "format": StepState.RUNNING,
        "mount": StepState.PENDING,
    }
    page = operator.get(f"/jobs/{job.pk}/").text
    assert "Interrupted" in page and "Resume from the interrupted step" in page

    release.touch()
    response = operator.post(f"/jobs/{job.pk}/retry/")
    assert response.status_code == 302
    job = wait_until_finished(job, 60)
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.attempts == 2
    # The step the worker died in ran again; the one before it did not.
    assert record.read_text().split() == ["preflight", "format", "format", "mount"]


def test_a_worker_process_killed_under_a_live_node_is_found_by_beats_sweep(
    operator, celery_worker_process, beat, tmp_path
):
    """As the demo runs it: a prefork node whose child process running the job is killed
    (out of memory, say) lives on and answers pings; beat's sweep finds the job's process gone."""
    celery_worker_process.stop()
    node = CeleryWorkerProcess("pytest-prefork", pool="prefork")
    node.start()
    try:
        record, release = tmp_path / "ran", tmp_path / "release"
        job = _long_job(record, release)
        job.refresh_from_db()
        assert job.worker == node.hostname and job.worker_pid != node.process.pid
        os.kill(job.worker_pid, signal.SIGKILL)
        job = _wait_for(
            lambda: Job.objects.filter(pk=job.pk, state=JobState.INTERRUPTED).first(),
            6 * SWEEP_SECONDS + 10,
            "beat's sweep did not mark the job interrupted",
        )
        assert f"pid {job.worker_pid}" in job.error and "'Format'" in job.error
        assert node.running
        release.touch()
        assert operator.post(f"/jobs/{job.pk}/retry/").status_code == 302
        job = wait_until_finished(job, 60)
        assert job.state == JobState.SUCCEEDED, job.error
        assert record.read_text().split() == ["preflight", "format", "format", "mount"]
    finally:
        node.stop()
        celery_worker_process.start()


def test_a_pid_given_again_to_a_later_worker_does_not_keep_a_dead_job_running(
    celery_worker_process, celery_worker, tmp_path
):
    """After a reboot the new worker may get the pid the old one had: the sweep tells them
    apart by when the process started."""
    pid = celery_worker_process.process.pid
    before_the_worker = create_job(ONE_STEP.kind, "Survey ssu01", params={"record": "-"})
    before_the_worker.transition_to(
        JobState.RUNNING,
        worker=celery_worker,
        worker_pid=pid,
        started=timezone.now() - timedelta(hours=1),
    )
    under_the_worker = create_job(ONE_STEP.kind, "Survey ssu02", params={"record": "-"})
    under_the_worker.transition_to(JobState.RUNNING, worker=celery_worker, worker_pid=pid)
    sweep_jobs()
    before_the_worker.refresh_from_db()
    under_the_worker.refresh_from_db()
    assert before_the_worker.state == JobState.INTERRUPTED
    assert under_the_worker.state == JobState.RUNNING


def test_a_job_started_without_a_worker_waits_and_runs_once_a_worker_starts(
    operator, celery_worker_process, celery_worker, beat, tmp_path
):
    job = _finished_job(tmp_path, "ssu01")
    celery_worker_process.stop()
    try:
        assert _healthz_down(operator) == ["workers"]
        assert operator.post(f"/jobs/{job.pk}/retry/").status_code == 302
        page = operator.get(f"/jobs/{job.pk}/").text
        assert "Queued: waiting for a worker to start it." in page
        time.sleep(SWEEP_SECONDS + 1)  # the sweep has nothing to send twice
        job.refresh_from_db()
        assert job.state == JobState.PENDING
    finally:
        celery_worker_process.start()
    job = wait_until_finished(job, 60)
    assert job.state == JobState.SUCCEEDED
    assert (tmp_path / "ssu01").read_text().split() == ["preflight", "preflight"]
    assert _healthz_down(operator) == []


def test_a_job_started_while_redis_is_down_is_queued_once_redis_is_back(
    operator, celery_worker, beat, tmp_path, settings
):
    settings.HEALTH_CHART_CACHE_SECONDS = 5  # chart data goes through the shared cache
    job = _finished_job(tmp_path, "ssu02")
    run_services_script("stop", "redis")
    try:
        assert "redis" in _healthz_down(operator)
        for url in PAGES + (f"/jobs/{job.pk}/",):
            response = operator.get(url)
            assert response.status_code == 200, (url, response.text[:300])
        started = time.monotonic()
        assert operator.post(f"/jobs/{job.pk}/retry/").status_code == 302
        assert time.monotonic() - started < 10
        page = operator.get(f"/jobs/{job.pk}/").text
        assert "Not queued yet: Redis (the queue) did not take it" in page
        job.refresh_from_db()
        assert job.state == JobState.PENDING and job.queued is None
    finally:
        run_services_script("start", "redis")
    # Beat's sweep sends it once the worker and beat are connected again.
    job = wait_until_finished(job, 90)
    assert job.state == JobState.SUCCEEDED
    assert (tmp_path / "ssu02").read_text().split() == ["preflight", "preflight"]
    assert _healthz_down(operator) == []


def test_a_hung_redis_costs_a_page_seconds_and_loses_no_job(
    operator, celery_worker, beat, tmp_path
):
    """Redis stopped with SIGSTOP: connections are accepted and never answered."""
    job = _finished_job(tmp_path, "ssu03")
    redis_pid = int((settings.RUN_DIR / "pid" / "redis.pid").read_text())
    os.kill(redis_pid, signal.SIGSTOP)
    try:
        for url in ("/", "/jobs/", "/healthz"):
            started = time.monotonic()
            assert operator.get(url).status_code in (200, 503), url
            assert time.monotonic() - started < 10, url
        started = time.monotonic()
        assert operator.post(f"/jobs/{job.pk}/retry/").status_code == 302
        assert time.monotonic() - started < 10
        job.refresh_from_db()
        assert job.state == JobState.PENDING and job.queued is None
    finally:
        os.kill(redis_pid, signal.SIGCONT)
    job = wait_until_finished(job, 90)
    assert job.state == JobState.SUCCEEDED
    assert (tmp_path / "ssu03").read_text().split() == ["preflight", "preflight"]


# The pages and chart data that show metrics of the inventory's SSU, server and target.
METRIC_PAGES = (
    "/",
    "/health/overview/",
    "/health/ssus/ssu01/",
    "/health/servers/oss01/",
    "/health/targets/scratch-OST0000/",
    "/analytics/load/",
    "/analytics/fill/",
    "/analytics/capacity/",
    "/usage/",
)
ANALYTICS = "/api/v1/analytics/report/"
METRIC_DATA = (
    "/health/charts/throughput/?kind=filesystem&name=scratch",
    "/health/charts/capacity/?kind=ssu&name=ssu01",
    "/health/charts/cpu/?kind=server&name=oss01",
    "/health/charts/fill/?kind=target&name=scratch-OST0000",
    ANALYTICS,
    "/api/v1/usage/",
)
SINCE = re.compile(r"Metrics unavailable since (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")


def test_metric_pages_say_since_when_influxdb_is_down_and_show_metrics_again_after(
    operator, celery_worker, beat
):
    for url in METRIC_DATA:
        response = operator.get(url)
        assert response.status_code == 200, (url, response.text[:300])
    stopped = datetime.now().replace(microsecond=0)
    run_services_script("stop", "influxdb")
    try:
        healthz = operator.healthz()
        assert healthz["down"] == ["influxdb"]
        assert " since " in healthz["services"]["influxdb"]["detail"]
        seen = set()
        for url in METRIC_PAGES:
            response = operator.get(url)
            assert response.status_code == 200, url
            seen.update(SINCE.findall(response.text))
        for url in METRIC_DATA:
            response = operator.get(url)
            seen.update(SINCE.findall(response.text))
            if url == ANALYTICS:
                # The report read before the outage is kept: shown, with the outage named.
                assert response.status_code == 200, response.text[:300]
                assert response.json()["cached"]["age_seconds"] > 0
                assert SINCE.search(response.json()["unavailable"])
                continue
            assert response.status_code == 503, url
        # One moment, the first failure's, on every page and in every answer.
        assert len(seen) == 1
        since = datetime.fromisoformat(seen.pop())
        assert stopped <= since <= datetime.now()
    finally:
        run_services_script("start", "influxdb")
    # The next read that gets an answer (here beat's evaluation or /healthz) ends the outage.
    _wait_for(lambda: not _healthz_down(operator), 30, "/healthz still names a service")
    for url in METRIC_PAGES:
        response = operator.get(url)
        assert response.status_code == 200, url
        assert "Metrics unavailable" not in response.text, url
    for url in METRIC_DATA:
        response = operator.get(url)
        assert response.status_code == 200, (url, response.text[:300])


def test_a_mail_relay_outage_is_named_on_healthz_without_failing_the_appliance(
    operator, celery_worker, smtp
):
    """Alert mail waits in the outbox meanwhile and goes out once
    (portal/alerts/tests/test_alert_mail_outbox.py); the appliance carries on."""
    body = operator.healthz()
    assert body["status"] == "ok" and body["services"]["mail"]["ok"]
    smtp.stop()
    try:
        response = operator.get("/healthz")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "degraded"
        assert body["down"] == [] and body["degraded"] == ["mail"]
        assert body["services"]["mail"]["detail"].startswith(f"no answer at 127.0.0.1:{smtp.port}")
        panel = operator.get("/health/services/")
        assert panel.status_code == 200
        assert re.search(
            r'class="tile orange"[^>]*>\s*<span[^>]*></span>\s*<strong>mail', panel.text
        )
    finally:
        smtp.start()
    body = operator.healthz()
    assert body["status"] == "ok" and body["degraded"] == []
