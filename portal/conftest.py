"""The shared test world of the portal: roles and users, the test profile's services, a real
Celery worker, and a headless Chromium. Services are the ones deploy/test.sh started."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis as redis_lib
import requests
from django.conf import settings

REPO = Path(__file__).resolve().parent.parent
WORKER_RACK = settings.RUN_DIR / "worker-rack"
CHROMIUM = "/usr/bin/chromium"
# Chromium's own background traffic is refused on these machines' closed network.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(autouse=True)
def fresh_metrics():
    """Each test's health evaluations start from InfluxDB and the inventory, not from what an
    earlier test's evaluations kept."""
    from portal.health.services.evaluation import REMEMBERED
    from portal.health.services.facts import FOLLOWED
    from portal.health.services.metrics import KEPT

    KEPT.clear()
    FOLLOWED.clear()
    REMEMBERED.clear()


def _transactional(item: pytest.Item) -> bool:
    """The test runs outside a rolled-back transaction, as pytest-django decides it."""
    marker = item.get_closest_marker("django_db")
    if marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")):
        return True
    return bool({"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())))


# A transactional test ends by emptying the database (Django's flush), and the rows the
# migrations made (default alert rules, content types, permissions) are gone for the tests that
# run after it in the same process; with the suite spread over several processes, any test may.
# So every test starts from the database as the migrations left it: after a transactional test,
# those rows are loaded again with their own keys, as a test with serialized_rollback expects
# (it loads the same rows at its start).


@pytest.fixture(autouse=True)
def migrated_rows_kept(request):
    """Before the first transactional test changes anything, the rows as the migrations left
    them (Django keeps them already when a test of the session asks for serialized_rollback)."""
    if _transactional(request.node):
        from django.db import connections

        request.getfixturevalue("django_db_setup")  # the test databases, not the appliance's
        with request.getfixturevalue("django_db_blocker").unblock():
            for connection in connections.all():
                if not hasattr(connection, "_test_serialized_contents"):
                    contents = connection.creation.serialize_db_to_string()
                    connection._test_serialized_contents = contents


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a transactional test's flush, the migrations' rows again."""
    yield
    # The last test's teardown has given the appliance's database back already: nothing to do.
    if nextitem is None or not _transactional(item):
        return
    from django.core.management import call_command
    from django.db import connections
    from pytest_django.plugin import blocking_manager_key

    with item.config.stash[blocking_manager_key].unblock():
        for connection in connections.all():
            contents = getattr(connection, "_test_serialized_contents", None)
            if contents is None:
                continue
            call_command(
                "flush",
                verbosity=0,
                interactive=False,
                database=connection.alias,
                inhibit_post_migrate=True,
            )
            connection.creation.deserialize_db_from_string(contents)


@pytest.fixture(autouse=True)
def fresh_chart_data():
    """A test that writes points and reads a chart at once sees them: no chart data reused."""
    kept = settings.HEALTH_CHART_CACHE_SECONDS
    settings.HEALTH_CHART_CACHE_SECONDS = 0
    yield
    settings.HEALTH_CHART_CACHE_SECONDS = kept


def _profile_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OSTARA_RUN_DIR", str(settings.RUN_DIR))
    return env


@pytest.fixture(scope="session")
def services():
    """Redis and InfluxDB of the test profile must answer; `make test` starts them."""
    problems = []
    try:
        redis_lib.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping()
    except redis_lib.RedisError as error:
        problems.append(f"Redis at {settings.REDIS_URL}: {error}")
    try:
        requests.get(f"{settings.INFLUXDB_URL}/ping", timeout=2).raise_for_status()
    except requests.RequestException as error:
        problems.append(f"InfluxDB at {settings.INFLUXDB_URL}: {error}")
    if problems:
        pytest.fail(
            "test services are not running (run the suite with `make test`): " + "; ".join(problems)
        )
    return {"redis_url": settings.REDIS_URL, "influxdb_url": settings.INFLUXDB_URL}


def run_services_script(action: str, which: str) -> None:
    subprocess.run(
        [str(REPO / "deploy" / "services.sh"), "test", action, which],
        check=True,
        env=_profile_env(),
        capture_output=True,
        timeout=120,
    )


class CeleryWorkerProcess:
    """A real Celery worker process on the test Redis and database, which a test may kill and
    start again under the same node name (a restarted worker). The session's runs its tasks in
    its own process (``solo``); ``prefork`` runs them in child processes, as the demo does."""

    def __init__(self, name: str = "pytest", pool: str = "solo") -> None:
        self.pool = pool
        database = settings.DATABASES["default"]
        self.env = _profile_env()
        if database["ENGINE"].endswith("sqlite3"):
            self.env["DATABASE_URL"] = f"sqlite:///{database['NAME']}"
        # Jobs the worker runs act on this virtual rack (the `worker_rack` fixture fills it).
        self.env["OSTARA_VIRTUAL_RACK"] = str(WORKER_RACK)
        # A drive replacement on the virtual rack takes seconds (its `rebuild_seconds`): look often.
        self.env["OSTARA_DRIVE_POLL_SECONDS"] = "1"
        self.hostname = f"{name}-{os.getpid()}@localhost"
        self.log_path = settings.RUN_DIR / "log" / "test-worker.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "workers.celery_app",
                    "worker",
                    "--pool",
                    self.pool,
                    # Two child processes in prefork, as in the demo (solo runs one task).
                    "--concurrency",
                    "2",
                    "--loglevel",
                    "INFO",
                    "--hostname",
                    self.hostname,
                    # The job kinds the job tests register (portal.jobs.registry), in the worker.
                    "--include",
                    "portal.jobs.tests.actions",
                ],
                cwd=REPO,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        from workers.celery_app import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(
                    f"the Celery worker exited with {self.process.returncode}; see {self.log_path}"
                )
            if app.control.ping(destination=[self.hostname], timeout=0.5):
                return
        self.stop()
        pytest.fail("the Celery worker did not answer within 60 s")

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, nothing acknowledged, no row tidied."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=20)
            self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
        self.process = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


@pytest.fixture(scope="session")
def celery_worker_process(services, django_db_setup, django_db_blocker):
    """The session's worker process, for tests that stop, kill and start it; they leave it
    running for the next test."""
    worker = CeleryWorkerProcess()
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def celery_worker(celery_worker_process):
    """The node name of a running real Celery worker on the test Redis, using the test database."""
    if not celery_worker_process.running:
        celery_worker_process.start()
    return celery_worker_process.hostname


@contextlib.contextmanager
def celery_beat(schedule: Path, **env: str):
    """Celery beat with the portal's schedule, its periods changed by ``env`` (settings'
    environment variables, e.g. ``OSTARA_JOB_SWEEP_SECONDS="2"``)."""
    log = open(settings.RUN_DIR / "log" / "test-beat.log", "ab")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.celery_app", "beat"]
        + ["--schedule", str(schedule), "--loglevel", "INFO"],
        cwd=REPO,
        env={**_profile_env(), **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def stop_virtual_sensors(rack: Path) -> None:
    """Stop the sensors that provisioning started on a virtual rack's hosts, and the arrays'
    REST collector it started for the rack's management server."""
    import signal

    pid_files = [*rack.glob("hosts/*/run/ostara-sensor.pid"), *rack.glob("arrays-collector/*.pid")]
    for pid_file in pid_files:
        try:
            pid = int(pid_file.read_text())
            # A pid file outlives its process, and the pid may be another program's by now:
            # on a busy machine (pids wrap within minutes), even another rack's sensor.
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"sensors" not in cmdline or not any(
                arg.startswith(os.fsencode(f"{rack}/")) for arg in cmdline
            ):
                continue
            os.kill(pid, signal.SIGTERM)
            os.kill(pid, signal.SIGCONT)  # held while its virtual host is down
        except (ValueError, OSError):
            pass


@pytest.fixture
def worker_rack(settings):
    """An empty virtual rack for the jobs the Celery worker runs; specs are racked by the test."""
    import shutil

    shutil.rmtree(WORKER_RACK, ignore_errors=True)
    settings.VIRTUAL_RACK = WORKER_RACK
    yield WORKER_RACK
    stop_virtual_sensors(WORKER_RACK)
    shutil.rmtree(WORKER_RACK, ignore_errors=True)


@pytest.fixture
def world(db):
    """Roles, and one user per role: admin, operator, viewer (password 'pw-<name>-123!')."""
    from django.contrib.auth import get_user_model

    from portal.accounts.choices import Role
    from portal.accounts.services import ensure_roles

    groups = ensure_roles()
    users = {}
    for role in Role:
        user = get_user_model().objects.create_user(
            username=role.value,
            password=f"pw-{role.value}-123!",
            is_staff=role == Role.ADMIN,
            is_superuser=role == Role.ADMIN,
        )
        user.groups.add(groups[role.value])
        users[role.value] = user
    return users


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def screenshot_dir() -> Path:
    """Screenshots are kept with the test results for people to look at."""
    path = REPO / "test-results" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def smtp(settings):
    """A real SMTP server on loopback that the portal's mail settings point at; its
    ``mailbox`` keeps what it accepted."""
    from portal.tests.smtp import SmtpServer, free_port

    server = SmtpServer(free_port())
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 5
    server.start()
    yield server
    server.stop()
