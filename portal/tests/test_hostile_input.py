"""Odd input on the running portal, served by gunicorn as in the demo and in production (with
deploy/gunicorn.conf.py): numbers that are not numbers, headers built from what was asked, JSON
nested a thousand deep. Each is a 400 (or the 403 a viewer is due), never a server error; and
what gunicorn and the portal add to every answer (no ``Server`` name, ``Cache-Control``).

gunicorn rather than the live server: gunicorn refuses a response header holding a control
character that Python's test server would pass on, and it is gunicorn that names itself.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest
import requests
from django.conf import settings
from django.test import Client

from portal.conftest import REPO, _profile_env

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

NOT_NUMBERS = ("nan", "NaN", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e20")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def gunicorn(django_db_setup, services):
    """The portal under gunicorn with the deployed configuration, on the test database."""
    port = _free_port()
    env = _profile_env()
    env["DATABASE_URL"] = f"sqlite:///{settings.DATABASES['default']['NAME']}"
    log = open(settings.RUN_DIR / "log" / "test-gunicorn.log", "ab")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "portal.wsgi:application"]
        + ["--config", str(REPO / "deploy" / "gunicorn.conf.py")]
        + ["--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", "60"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{url}/accounts/login/", timeout=30)
            break
        except requests.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"gunicorn did not start; see {log.name}")
            time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(timeout=30)
    log.close()


# A CSRF secret of our own, sent back as the header: a browser's form or script does the same.
CSRF = "hostile0input0csrf0secret0abcdef"


@pytest.fixture
def portal(gunicorn, world):
    """``portal(role)``: a requests session signed in as that role, as a browser is (a session
    cookie, and the CSRF token its scripts send)."""
    sessions: dict[str, requests.Session] = {}

    def signed_in(role: str) -> requests.Session:
        if role not in sessions:
            client = Client()
            client.login(username=role, password=f"pw-{role}-123!")
            session = sessions[role] = requests.Session()
            session.cookies.set("sessionid", client.cookies["sessionid"].value)
            session.cookies.set("csrftoken", CSRF)
            session.headers.update({"X-CSRFToken": CSRF, "Referer": gunicorn + "/"})
        return sessions[role]

    signed_in.url = gunicorn
    return signed_in


def _is_bad_request_naming(response: requests.Response, field: str) -> bool:
    return response.status_code == 400 and field in response.text


def test_an_analytics_window_that_is_not_a_time_is_refused_naming_it(portal):
    operator = portal("operator")
    for value in NOT_NUMBERS:
        for path, field in (
            (f"/api/v1/analytics/report/?since={value}", "since"),
            (f"/api/v1/analytics/report/?since=1&until={value}", "until"),
            (f"/analytics/load/?since={value}", "since"),
            (f"/analytics/capacity/?since={value}&until={value}", "since"),
        ):
            response = operator.get(portal.url + path, timeout=30)
            assert _is_bad_request_naming(response, field), (path, response.status_code)


def test_a_heat_map_cell_whose_times_are_not_times_is_refused_naming_them(portal):
    for start, end, field in (
        ("nan", "inf", "start"),
        ("-1e308", "1e308", "start"),
        ("1", "1e20", "end"),
        ("1", "1e9", "end"),  # thirty years: more than the longest window
    ):
        response = portal("viewer").get(
            f"{portal.url}/analytics/cell/?by=server&name=oss01&start={start}&end={end}",
            timeout=30,
        )
        assert _is_bad_request_naming(response, field), (start, end, response.status_code)


def test_an_api_page_beyond_any_number_is_refused_naming_its_parameter(portal):
    for value in ("1e308", "nan", "-1", "99999999999999999999999"):
        for field in ("limit", "offset"):
            response = portal("viewer").get(
                f"{portal.url}/api/v1/jobs/?{field}={value}", timeout=30
            )
            assert _is_bad_request_naming(response, field), (field, value, response.status_code)
    assert portal("viewer").get(f"{portal.url}/api/v1/jobs/?limit=5&offset=0").status_code == 200


def test_the_dashboard_refresh_answers_whatever_filesystem_is_asked_for(portal):
    from portal.health.models import Evaluation

    # Its ETag exists once the colours have been evaluated.
    Evaluation.objects.create(
        pk=1, finished=datetime.now(tz=UTC), seconds=0, objects_evaluated=0, changes=0
    )
    viewer = portal("viewer")
    for fs in ("%00", "%0d%0aSet-Cookie:%20x=1", "%22x%22", "%C3%A9", "scratch"):
        response = viewer.get(f"{portal.url}/health/overview/?fs={fs}", timeout=30)
        assert response.status_code == 200, fs
        again = viewer.get(
            f"{portal.url}/health/overview/?fs={fs}",
            headers={"If-None-Match": response.headers["ETag"]},
            timeout=30,
        )
        assert again.status_code == 304, fs


JSON = {"Content-Type": "application/json"}


def _nested(depth: int) -> str:
    return '{"server": ' + "[" * depth + "]" * depth + "}"


def test_json_nested_a_thousand_deep_is_refused(portal):
    body = _nested(1000)
    for path in (
        "/api/v1/console/set-param/",
        "/api/v1/alert-silences/",
        "/api/v1/console/failover/",
    ):
        # A viewer may not write, whatever the body says.
        viewer = portal("viewer").post(portal.url + path, data=body, headers=JSON, timeout=30)
        assert viewer.status_code == 403, path
        operator = portal("operator").post(portal.url + path, data=body, headers=JSON, timeout=30)
        assert operator.status_code == 400, path
        assert "nested" in operator.json()["detail"], path


def test_json_nested_a_little_is_read_as_before(portal):
    response = portal("operator").post(
        portal.url + "/api/v1/console/failover/",
        data=_nested(3),
        headers=JSON,
        timeout=30,
    )
    # Read, and refused by the serializer naming the field, not by the depth.
    assert response.status_code == 400
    assert "server" in response.json()


def test_gunicorn_does_not_name_itself(portal):
    for path in ("/accounts/login/", "/api/v1/jobs/", "/no-such-page/"):
        assert "Server" not in portal("viewer").get(portal.url + path, timeout=30).headers


def test_signed_in_pages_and_api_answers_are_not_stored_by_the_browser(portal):
    viewer = portal("viewer")
    for path in ("/", "/jobs/", "/api/v1/jobs/", "/accounts/password/"):
        response = viewer.get(portal.url + path, timeout=30)
        assert response.status_code == 200, path
        assert "no-store" in response.headers["Cache-Control"], path
    # Static files stay cacheable.
    static = viewer.get(portal.url + "/static/portal/ostara.css", timeout=30)
    assert static.status_code == 200
    assert "no-store" not in static.headers.get("Cache-Control", "")


def test_the_refreshes_with_an_etag_are_kept_only_to_be_asked_again(portal):
    from portal.health.models import Evaluation

    Evaluation.objects.create(
        pk=1, finished=datetime.now(tz=UTC), seconds=0, objects_evaluated=0, changes=0
    )
    viewer = portal("viewer")
    for path in ("/health/overview/", "/api/v1/health/"):
        response = viewer.get(portal.url + path, timeout=30)
        assert response.headers["Cache-Control"] == "private, no-cache", path
        again = viewer.get(
            portal.url + path, headers={"If-None-Match": response.headers["ETag"]}, timeout=30
        )
        assert again.status_code == 304, path
        assert again.headers["Cache-Control"] == "private, no-cache", path


def test_a_name_with_a_trailing_newline_is_refused_not_trimmed_and_looked_up(portal):
    from portal.inventory.services import save_plans
    from portal.inventory.tests.conftest import load_spec

    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
    response = portal("operator").post(
        portal.url + "/api/v1/surveys/", json={"ssu": "ssu01\n", "confirm": True}, timeout=30
    )
    assert response.status_code == 400
    assert "newlines" in response.json()["ssu"][0]

    operator = portal("operator")
    # The console's acts: 'oss01\n' was trimmed and acted on oss01.
    for path, body, field in (
        ("/api/v1/console/failover/", {"server": "oss01\n"}, "server"),
        ("/api/v1/console/maintenance/", {"server": "oss01\n", "on": True}, "server"),
        (
            "/api/v1/console/set-param/",
            {"filesystem": "scratch", "name": "osc.*.max_dirty_mb\n", "value": "512"},
            "name",
        ),
    ):
        response = operator.post(portal.url + path, json=body, timeout=30)
        assert _is_bad_request_naming(response, field), (path, response.text)
    read = operator.get(
        portal.url + "/api/v1/console/parameters/",
        params={"filesystem": "scratch\n", "name": "osc.*.max_dirty_mb"},
        timeout=30,
    )
    assert _is_bad_request_naming(read, "filesystem"), read.text
