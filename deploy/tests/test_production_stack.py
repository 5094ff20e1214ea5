"""The production install end to end on loopback: a real PostgreSQL set up by the installer's SQL,
the database migrated and the first admin created through ``ostara-manage``, the portal and the
worker started with the commands of their systemd units, and nginx with the rendered site in
front. A browser's view: HTTP is sent to HTTPS, /healthz answers over HTTPS, static files come
back, the admin signs in."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
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
    unit_command,
)

pytestmark = pytest.mark.services
CREATE_DATABASE = REPO / "deploy" / "production" / "create-database.sql"


def postgresql_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL's initdb is missing: `make install` installs Debian's postgresql")
    return found[-1].parent


@pytest.fixture(scope="module")
def postgresql():
    """A PostgreSQL cluster of its own on a loopback port, with the role and database made by the
    installer's SQL (run twice: the installer runs it at every upgrade). Yields DATABASE_URL."""
    pg_bin = postgresql_bin()
    base = Path(tempfile.mkdtemp(prefix="ostara-pg-"))
    # initdb refuses to run as root: the cluster belongs to nobody, as Debian's to postgres.
    as_owner = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(base, nobody.pw_uid, nobody.pw_gid)
        as_owner = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    port = free_port()
    data = base / "data"
    server = ["-c", "listen_addresses=127.0.0.1", "-p", str(port), "-k", str(base)]
    server += ["-c", "fsync=off", "-c", "full_page_writes=off"]

    def pg(*args: str, owner: bool = True) -> None:
        done = subprocess.run(
            [str(pg_bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            **(as_owner if owner else {}),
        )
        assert done.returncode == 0, f"{args[0]}: {done.stdout}{done.stderr}"

    # Debian's defaults: scram-sha-256 over TCP; the superuser reaches the socket without one.
    pg(
        "initdb",
        "-D",
        str(data),
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "--no-sync",
    )
    try:
        pg(
            "pg_ctl",
            "-D",
            str(data),
            "-w",
            "-t",
            "60",
            "-l",
            str(base / "log"),
            "-o",
            " ".join(server),
            "start",
        )
        password = "Pg-" + os.urandom(12).hex()
        for _ in range(2):
            pg(
                "psql",
                "-X",
                "-q",
                "-h",
                str(base),
                "-p",
                str(port),
                "-U",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-v",
                "role=ostara",
                "-v",
                f"password={password}",
                "-f",
                str(CREATE_DATABASE),
                owner=False,
            )
        yield f"postgres://ostara:{password}@127.0.0.1:{port}/ostara"
    finally:
        subprocess.run(
            [str(pg_bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
            **as_owner,
        )
        shutil.rmtree(base, ignore_errors=True)


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
    run_dir = Path(read_env_file(env_file)["OSTARA_RUN_DIR"])
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"], ["ostara_setup"]):
        done = subprocess.run(
            [str(target / "ostara-manage"), *command],
            env=clean_environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"ostara-manage {command[0]}: {done.stdout}{done.stderr}"

    processes = []
    try:
        for unit in ("ostara-portal", "ostara-worker"):
            argv, environment, directory = unit_command(target / f"{unit}.service", env_file)
            log = open(target / "log" / f"{unit}.log", "wb")  # noqa: SIM115 - closed below
            processes.append(
                (
                    subprocess.Popen(
                        argv, cwd=directory, env=environment, stdout=log, stderr=subprocess.STDOUT
                    ),
                    log,
                )
            )
        conf = nginx_conf(target)
        nginx_log = open(target / "log" / "nginx.log", "wb")  # noqa: SIM115 - closed below
        processes.append(
            (
                subprocess.Popen(
                    nginx_command(conf, "-g", "daemon off;"),
                    stdout=nginx_log,
                    stderr=subprocess.STDOUT,
                ),
                nginx_log,
            )
        )
        site = {
            "https": f"https://127.0.0.1:{ports['https']}",
            "http": f"http://127.0.0.1:{ports['http']}",
            "verify": str(target / "tls" / "ostara.crt"),
            "password": (run_dir / "admin-password").read_text().strip(),
            "log": target / "log",
        }

        def portal_answers() -> bool:
            for process, log in processes:
                if process.poll() is not None:
                    pytest.fail(
                        f"{process.args[0]} exited with {process.returncode}: see {log.name}"
                    )
            try:
                requests.get(f"{site['https']}/accounts/login/", verify=site["verify"], timeout=5)
            except requests.ConnectionError:
                return False
            return True

        wait_for("the portal through nginx", portal_answers)
        yield site
    finally:
        for process, _ in reversed(processes):
            process.terminate()
        for process, log in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()


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

    # The worker takes a few seconds more than the portal to answer Celery's ping.
    wait_for("a healthy /healthz", lambda: healthz().status_code == 200, seconds=90)
    body = healthz().json()
    assert body["status"] == "ok"
    assert body["services"]["database"]["detail"] == "postgresql answers"
    assert body["services"]["workers"]["detail"] == "1 worker(s) answer"
    assert body["services"]["workers"]["extra"]["workers"][0].startswith("ostara@")


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


def test_an_upload_larger_than_the_site_allows_is_refused_by_nginx(appliance):
    response = requests.post(
        f"{appliance['https']}/ssus/add/upload/",
        data=b"{" + b" " * (11 * 1024 * 1024) + b"}",
        verify=appliance["verify"],
        timeout=30,
    )
    assert response.status_code == 413
