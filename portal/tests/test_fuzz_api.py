"""Schemathesis against the API's own OpenAPI schema, in-process through the WSGI app, signed
in as a viewer and as an operator (no operation of the API is for administrators only): every
operation and method, no 5xx, every response as the schema describes it. Then what schemathesis
does not send: every query parameter of the API and of the pages given numbers that are not
numbers (NaN, infinities, past any float or integer), and every write given JSON nested past
any sane depth, from a browser's session (whose CSRF check came before the permission's).

Each example runs in a transaction rolled back afterwards. Nothing touches a rack: the one
place that runs ansible is replaced by a rack that cannot be reached, which keeps what it was
asked to run, and a job created by a POST is never handed to a worker (the test's transaction
never commits).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
import schemathesis
import schemathesis.config
from django.core import signals
from django.db import close_old_connections, transaction
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import given
from hypothesis import strategies as st

from portal.health.tests.conftest import metrics_db  # noqa: F401
from portal.wsgi import application
from provisioning.runner import PlaybookResult
from provisioning.tests.fuzzing import (
    SHELL_SAFE,
    deep_json_texts,
    examples,
    hostile_number_strings,
    hostile_text,
)

# Reports read a fresh InfluxDB database of their own.
pytestmark = [pytest.mark.fuzz, pytest.mark.services, pytest.mark.usefixtures("metrics_db")]

SPECS = Path(__file__).resolve().parents[2] / "provisioning" / "tests" / "specs"
# The schema /api/schema/ serves, built from the URL configuration: a new view is fuzzed too.
# A value the schema allows may still name a filesystem, array or drive that does not exist:
# refused with 400 naming the field, which is the right answer to valid-looking data.
CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "checks": {
            # Off: DRF reads leniently by design (an unknown query parameter is ignored, a
            # bad `offset` means 0), so a request outside the schema may well get a 200.
            "negative_data_rejection": {"enabled": False},
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "400", "401", "403", "404", "409"]
            },
        }
    }
)
API = SchemaGenerator().get_schema(request=None, public=True)
schema = schemathesis.openapi.from_dict(API, config=CONFIG)
schema.app = application  # in-process, through the WSGI app, as from_wsgi would load it
# Modules that run playbooks, each with its own import of the runner.
PLAYBOOK_CALLERS = [
    "portal.console.services",
    "portal.console.services.params",
    "portal.surveys.services",
    "portal.inventory.provisioning",
]


ROLES = ("viewer", "operator")


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings_in(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in strings_in(item)]
    return []


@pytest.fixture
def unreachable_rack(monkeypatch):
    """Every playbook fails as on a rack whose servers do not answer; the calls are kept."""
    calls: list[tuple[str, dict]] = []

    def run_playbook(playbook, inventory, extravars=None, **_options):
        calls.append((playbook, extravars or {}))
        hosts = sorted(inventory.get("all", {}).get("hosts", {})) or ["rack"]
        return PlaybookResult(playbook, "failed", 4, unreachable={host: 1 for host in hosts})

    for module in PLAYBOOK_CALLERS:
        monkeypatch.setattr(f"{module}.run_playbook", run_playbook)
    return calls


@pytest.fixture
def api_world(services, world, unreachable_rack, settings):
    """The operator, the MDS pair and the reference SSU, and a WSGI app that keeps the test's
    database connection between requests (as Django's test client does)."""
    from portal.inventory.services import save_plans

    save_plans(
        [json.loads((SPECS / f"{name}.json").read_text()) for name in ("mds_pair", "reference_ssu")]
    )
    settings.DEBUG_PROPAGATE_EXCEPTIONS = True  # a server error fails with its traceback
    # Thousands of examples a minute as one user in `make fuzz`: the input is fuzzed, not the
    # rate (portal/console/tests/test_console_on_the_running_portal.py tests the rate).
    settings.OSTARA_THROTTLE_USER_RATE = None
    # Basic auth checks the password on every request: the test settings' fast hash keeps the
    # examples many.
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield world
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


def basic_auth(username: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:pw-{username}-123!".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@schema.parametrize()
@pytest.mark.parametrize("role", ROLES)
@examples(10)
def test_every_operation_answers_as_its_schema_says(case, role, api_world, unreachable_rack):
    with transaction.atomic():
        case.call_and_validate(base_url="http://localhost", headers=basic_auth(role))
        transaction.set_rollback(True)
    for playbook, variables in unreachable_rack:
        for text in strings_in(variables):
            assert SHELL_SAFE.fullmatch(text), f"{playbook} was given {text!r}"


def _example_path(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


# Every query parameter of every read the API offers, from its schema: a new one is fuzzed too.
API_QUERIES = sorted(
    (_example_path(path), parameter["name"])
    for path, operations in API["paths"].items()
    if "get" in operations
    for parameter in operations["get"].get("parameters", [])
    if parameter["in"] == "query"
)
# The pages' query parameters (no schema lists them), with what the page needs besides.
CELL = "/analytics/cell/?by=server&name=oss01&start=1700000000&end=1700000300"
PAGE_QUERIES = [
    *(("/analytics/load/", name) for name in ("since", "until", "window", "fs")),
    *(("/analytics/capacity/", name) for name in ("since", "until")),
    *((CELL, name) for name in ("start", "end", "fs")),
    ("/health/overview/", "fs"),
    ("/", "fs"),
    ("/health/charts/throughput/?kind=filesystem&name=scratch", "range"),
    ("/surveys/compare/", "a"),
    ("/surveys/compare/?a=1", "b"),
    *(("/alerts/history/", name) for name in ("page", "since", "rule", "severity")),
    *(("/console/audit/", name) for name in ("page", "since", "until")),
    *(
        ("/health/kernel-log/", name)
        for name in ("server", "target", "message_number", "severity", "window", "until")
    ),
]  # fmt: skip
# Every write the API offers.
API_WRITES = sorted(
    (_example_path(path), method)
    for path, operations in API["paths"].items()
    for method in operations
    if method in ("post", "put", "patch")
)
# A browser's CSRF token (a secret of our own, as cookie and header).
CSRF = "fuzz0csrf0secret0abcdefghijklmno"


def browser(user, csrf: bool = False) -> Client:
    """A browser signed in as ``user`` (a session cookie); with ``csrf``, its CSRF token checked
    as on the running portal."""
    client = Client(enforce_csrf_checks=csrf, HTTP_X_CSRFTOKEN=CSRF)
    client.cookies["csrftoken"] = CSRF
    client.force_login(user)
    return client


@pytest.mark.parametrize("role", ROLES)
@examples(20)
@given(
    target=st.sampled_from(API_QUERIES + PAGE_QUERIES),
    value=st.one_of(hostile_number_strings, hostile_text()),
)
def test_no_query_parameter_makes_a_server_error(role, target, value, api_world):
    path, name = target
    query = urlencode({name: value})  # after what the path asks already, which it overrides
    response = browser(api_world[role]).get(f"{path}{'&' if '?' in path else '?'}{query}")
    assert response.status_code < 500, (path, name, value)
    assert response.status_code in (200, 302, 400, 403, 404), (path, name, value)


@pytest.mark.parametrize("role", ROLES)
@examples(10)
@given(target=st.sampled_from(API_WRITES), body=deep_json_texts)
def test_json_nested_past_any_sane_depth_is_refused(role, target, body, api_world):
    path, method = target
    client = browser(api_world[role], csrf=True)
    with transaction.atomic():
        response = getattr(client, method)(path, body, content_type="application/json")
        transaction.set_rollback(True)
    if role == "viewer":
        assert response.status_code == 403, (method, path)  # before the body is read
    else:
        # Refused, or the object the path names is not there (looked up before the body).
        assert response.status_code in (400, 404), (method, path, response.status_code)
