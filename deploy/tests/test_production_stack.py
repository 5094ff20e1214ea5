"""The production install end to end on loopback: a real PostgreSQL set up by the installer's SQL,
the installer's set-up commands run through the rendered ``ostara-manage``, the portal, the
worker and beat started with the commands of their systemd units, and nginx with the rendered
site in front. A browser's view: HTTP is sent to HTTPS, /healthz answers over HTTPS, static files
come back, the admin signs in; and beat's periodic tasks run on the worker."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import requests
from django.conf import settings

from deploy.tests.conftest import (
    REPO,
    clean_environment,
    free_port,
    nginx_command,
    nginx_conf,
    read_env_file,
    render,
    running_postgresql,
    unit_command,
)

pytestmark = [pytest.mark.services, pytest.mark.rack(seconds=70)]


@pytest.fixture(scope="module")
def postgresql():
    """DATABASE_URL of a PostgreSQL cluster of the module's own (``running_postgresql``)."""
    with running_postgresql() as url:
        yield url


def wait_for(what: str, answers, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not answers():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not answer within {seconds:.0f} s")
        time.sleep(0.3)


@pytest.fixture(scope="module")
def appliance(postgresql, tmp_path_factory):
    """The installed appliance on loopback ports, with its own PostgreSQL and a Redis database of
    its own (so its worker takes none of the suite's tasks); InfluxDB is the test profile's."""
    target = tmp_path_factory.mktemp("production")
    ports = {name: free_port() for name in ("portal", "http", "https")}
    render(
        target,
        DATABASE_URL=postgresql,
        REDIS_URL=re.sub(r"/\d*$", "/7", settings.REDIS_URL),
        INFLUXDB_URL=settings.INFLUXDB_URL,
        OSTARA_PORTAL_BIND=f"127.0.0.1:{ports['portal']}",
        OSTARA_HTTP_LISTEN=f"127.0.0.1:{ports['http']}",
        OSTARA_HTTPS_LISTEN=f"127.0.0.1:{ports['https']}",
    )
    env_file = target / "ostara.env"
    # A metrics database of its own in the test profile's InfluxDB, as an administrator would
    # edit the file.
    metrics = f"production_{uuid.uuid4().hex[:10]}"
    env_file.write_text(
        env_file.read_text().replace("INFLUXDB_DATABASE=ostara\n", f"INFLUXDB_DATABASE={metrics}\n")
    )
    assert read_env_file(env_file)["INFLUXDB_DATABASE"] == metrics
    run_dir = Path(read_env_file(env_file)["OSTARA_RUN_DIR"])
    # What the installer runs, in its order.
    for command in (
        ["migrate", "--noinput"],
        ["collectstatic", "--noinput"],
        ["ostara_setup"],
        ["influxdb_setup"],
    ):
        done = subprocess.run(
            [str(target / "ostara-manage"), *command],
            env=clean_environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"ostara-manage {command[0]}: {done.stdout}{done.stderr}"

    processes: list[tuple[subprocess.Popen, Path]] = []

    def start(name: str, argv: list[str], **options) -> None:
        log_path = target / "log" / f"{name}.log"
        with open(log_path, "wb") as log:  # the child keeps its own descriptor
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, **options)
        processes.append((process, log_path))

    try:
        for unit in ("ostara-portal", "ostara-worker", "ostara-beat"):
            argv, environment, directory = unit_command(target / f"{unit}.service", env_file)
            start(unit, argv, cwd=directory, env=environment)
        start("nginx", nginx_command(nginx_conf(target), "-g", "daemon off;"))
        site = {
            "https": f"https://127.0.0.1:{ports['https']}",
            "portal": f"http://127.0.0.1:{ports['portal']}",
            "http": f"http://127.0.0.1:{ports['http']}",
            "verify": str(target / "tls" / "ostara.crt"),
            "password": (run_dir / "admin-password").read_text().strip(),
            "log": target / "log",
            "run_dir": run_dir,
            "manage": target / "ostara-manage",
        }

        def portal_answers() -> bool:
            for process, log_path in processes:
                if process.poll() is not None:
                    pytest.fail(f"{process.args[0]} exited with {process.returncode}: {log_path}")
            try:
                requests.get(f"{site['https']}/accounts/login/", verify=site["verify"], timeout=5)
            except (requests.ConnectionError, requests.Timeout):
                return False  # not listening yet, or a worker still starting: asked again
            return True

        wait_for("the portal through nginx", portal_answers)
        yield site
    finally:
        for process, _ in reversed(processes):
            process.terminate()
        for process, _ in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        requests.post(
            f"{settings.INFLUXDB_URL}/query", params={"q": f'DROP DATABASE "{metrics}"'}, timeout=10
        )


def test_plain_http_is_sent_to_https_at_the_same_address(appliance):
    response = requests.get(
        f"{appliance['http']}/jobs/?state=failed", allow_redirects=False, timeout=10
    )
    assert response.status_code == 301
    assert response.headers["Location"] == f"{appliance['https']}/jobs/?state=failed"
    # No version for scanners to look up.
    assert response.headers["Server"] == "nginx"


def test_healthz_answers_over_https_with_postgresql_and_the_worker_of_its_unit(appliance):
    def healthz() -> requests.Response:
        return requests.get(f"{appliance['https']}/healthz", verify=appliance["verify"], timeout=30)

    def healthy() -> bool:
        try:
            return healthz().status_code == 200
        except requests.Timeout:
            return False  # a machine busy with the rest of the suite: asked again

    # The worker takes a few seconds more than the portal to answer Celery's ping.
    wait_for("a healthy /healthz", healthy, seconds=120)
    body = healthz().json()
    assert body["down"] == []
    assert body["services"]["database"]["detail"] == "postgresql answers"
    assert body["services"]["workers"]["detail"] == "1 worker(s) answer"
    assert body["services"]["workers"]["extra"]["workers"][0].startswith("ostara@")


def test_a_probe_on_the_server_itself_asks_gunicorn_for_healthz_directly(appliance):
    response = requests.get(f"{appliance['portal']}/healthz", allow_redirects=False, timeout=30)
    assert response.status_code in (200, 503), response.text[:300]
    assert response.json()["services"]["database"]["detail"] == "postgresql answers"
    # The unit's gunicorn (deploy/gunicorn.conf.py) does not name itself.
    assert "Server" not in response.headers


def test_static_files_come_through_nginx(appliance):
    response = requests.get(
        f"{appliance['https']}/static/portal/ostara.css", verify=appliance["verify"], timeout=10
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/css")
    assert response.text == (REPO / "portal" / "static" / "portal" / "ostara.css").read_text()


def test_the_admin_signs_in_over_https_through_nginx(appliance):
    # Per request: REQUESTS_CA_BUNDLE in the environment would override the session's.
    browser, verify = requests.Session(), appliance["verify"]
    login = browser.get(f"{appliance['https']}/accounts/login/", verify=verify, timeout=10)
    assert login.status_code == 200
    # Django's own headers, once: nginx adds none of its own.
    assert login.headers["X-Frame-Options"] == "DENY"
    assert login.headers["X-Content-Type-Options"] == "nosniff"
    # The environment file's OSTARA_PRODUCTION: HSTS, the policy, cookies only over HTTPS.
    assert login.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert "default-src 'self'" in login.headers["Content-Security-Policy"]
    assert browser.cookies and all(cookie.secure for cookie in browser.cookies)
    signed_in = browser.post(
        f"{appliance['https']}/accounts/login/",
        data={
            "username": "admin",
            "password": appliance["password"],
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
        headers={"Origin": appliance["https"], "Referer": login.url},
        allow_redirects=False,
        verify=verify,
        timeout=10,
    )
    assert signed_in.status_code == 302, signed_in.text[:500]
    assert signed_in.headers["Location"] == "/"
    jobs = browser.get(f"{appliance['https']}/jobs/", verify=verify, timeout=30)
    assert jobs.status_code == 200
    assert jobs.url == f"{appliance['https']}/jobs/"
    assert "admin" in jobs.text


def test_the_installed_settings_pass_djangos_deployment_checks(appliance):
    done = subprocess.run(
        [str(appliance["manage"]), "check", "--deploy", "--fail-level", "WARNING"],
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout


def test_an_upload_larger_than_the_site_allows_is_refused_by_nginx(appliance):
    response = requests.post(
        f"{appliance['https']}/ssus/add/upload/",
        data=b"{" + b" " * (11 * 1024 * 1024) + b"}",
        verify=appliance["verify"],
        timeout=30,
    )
    assert response.status_code == 413


def test_beat_of_its_unit_has_the_worker_evaluate_health(appliance):
    worker_log = appliance["log"] / "ostara-worker.log"
    evaluated = re.compile(r"Task health\.evaluate\[[0-9a-f-]+\] succeeded")
    wait_for("a health evaluation sent by beat", lambda: evaluated.search(worker_log.read_text()))
    # Beat keeps its schedule in the run directory, the one path its unit may write.
    # (a shelve: one file or several, by the dbm module Python has)
    assert list(appliance["run_dir"].glob("celerybeat-schedule*"))
