"""The role matrix: every URL of the portal, the API and the Django admin, found by walking the
URL configuration (a new view is covered without editing this test), asked with every HTTP
method by an anonymous visitor, a viewer, an operator and an administrator, against an explicit
expectation of who may do what.

- Anonymous: the login page (401 on /api/), except the few public views.
- Viewer: reads; every mutating method refused (403, or 405 where the method does not exist),
  even with the data a real form or API client would send, and nothing in the database changed.
- Operator: the operational actions; users and settings refused.
- Administrator: everything, the Django admin included.

"Allowed" means the role got past the permission checks: not 401, 403 or 405, no redirect to a
login page, and no 5xx. A 400, 404, 409 or a redirect elsewhere from the view itself is allowed:
the view looked at the request and answered it (a form with an error, an object a previous
request deleted, an act the rack refused). A 500 anywhere fails.
"""

from __future__ import annotations

import json
import mailbox
import re
import sys
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from portal.accounts.choices import Role
from portal.alerts.choices import (
    ConditionKind,
    GroupMailKind,
    GroupStatus,
    HealthCondition,
    Severity,
    TransitionKind,
)
from portal.alerts.models import (
    Delivery,
    Event,
    GroupMail,
    IncidentGroup,
    Rule,
    Silence,
    Transition,
)
from portal.analytics.models import AnalyticsSettings
from portal.console.choices import KIND_SET_PARAM, Act, ObjectKind, Via
from portal.console.models import AuditEntry, DriveReplacement, Maintenance
from portal.health.models import HealthSettings, HealthStatus, RetentionSettings, StatusChange
from portal.health.services import appliance
from portal.health.tests.conftest import metrics_db, rack_inventory  # noqa: F401
from portal.inventory.models import Drive, Server, StorageArray, Target
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.services import create_job
from portal.surveys.models import Survey
from portal.surveys.tests.test_survey_pages_and_api import stored_survey
from portal.tests.role_matrix_table import (
    ADMIN,
    ADMIN_PUBLIC,
    ANONYMOUS,
    API,
    BODIES,
    LOGOUTS,
    METHODS,
    OPERATOR,
    OWN_ACCOUNT,
    PAGE_KWARGS,
    PAGE_QUERY,
    PAGES,
    RANK,
    READ,
    ROLES,
    SAFE,
    SENDS_SIGNED_IN_AWAY,
    VIEWER,
)
from portal.usage.models import OwnerName
from provisioning import runner

pytestmark = [pytest.mark.django_db, pytest.mark.services]


@dataclass
class Endpoint:
    name: str  # the URL name with its namespaces, or the route of an unnamed pattern
    route: str
    area: str  # "page", "api" or "admin"
    path: str
    access: dict[str, str]  # method -> the least role; other methods do not exist
    body: dict | None = None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.path})"


# --- the URL configuration, walked ------------------------------------------------------------


def url_patterns(resolver=None, prefix: str = "", namespace: str = ""):
    """Every pattern as (route, name with namespaces or None, pattern)."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(filter(None, (namespace, entry.namespace)))
            yield from url_patterns(entry, prefix + str(entry.pattern), inner)
        else:
            assert isinstance(entry, URLPattern)
            name = ":".join(filter(None, (namespace, entry.name))) if entry.name else None
            yield prefix + str(entry.pattern), name, entry


def _first(model):
    row = model._default_manager.order_by("pk").first()
    assert row is not None, f"the matrix's world has no {model.__name__}: create one in `matrix`"
    return row


def _api_kwargs(view_class, route: str) -> dict:
    kwargs = {}
    lookup = getattr(view_class, "lookup_url_kwarg", None) or getattr(
        view_class, "lookup_field", "pk"
    )
    if f"(?P<{lookup}>" in route:
        row = _first(view_class.queryset.model)
        kwargs[lookup] = getattr(row, view_class.lookup_field)
    return kwargs


def _admin_kwargs(pattern, route: str, world: dict) -> dict:
    kwargs = {}
    model_admin = getattr(pattern.callback, "model_admin", None)
    if "object_id>" in route:
        model = model_admin.model if model_admin else Target
        kwargs["object_id"] = _first(model).pk
    if "content_type_id>" in route:
        from django.contrib.contenttypes.models import ContentType

        kwargs["content_type_id"] = ContentType.objects.get_for_model(Target).pk
    if "<id>" in route:
        kwargs["id"] = world["users"][VIEWER].pk
    if "(?P<app_label>" in route:
        kwargs["app_label"] = "alerts"
    if "(?P<url>" in route:
        kwargs["url"] = "no-such-page/"
    return kwargs


def _filled(route: str, kwargs: dict) -> str:
    """An unnamed pattern's path: its parameters put in."""
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(kwargs[m[1]]), route)
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(kwargs[m[1]]), path)
    return "/" + path.replace("^", "").replace("$", "")


def endpoints(world: dict) -> tuple[list[Endpoint], list[str]]:
    """Every URL pattern as an endpoint to ask, and what could not be made into one."""
    found, problems = [], []
    for route, name, pattern in url_patterns():
        callback = pattern.callback
        view_class = getattr(callback, "cls", None)
        key = name or route
        if route.startswith("admin/"):
            area, kwargs = "admin", _admin_kwargs(pattern, route, world)
            access = {}
        elif route.startswith("api/") and name not in PAGES:
            area = "api"
            if getattr(callback, "actions", None):
                kwargs = _api_kwargs(view_class, route)
                access = {"OPTIONS": VIEWER}
                for method in callback.actions:
                    access[method.upper()] = VIEWER if method.upper() in SAFE else OPERATOR
                if "GET" in access:
                    access["HEAD"] = VIEWER
            else:
                kwargs, access = {}, {}
            access = API.get(key, access)
            if not access:
                problems.append(
                    f"{key}: an API view that is not a viewset: list it in role_matrix_table.API"
                )
                continue
        else:
            area, access = "page", PAGES.get(key, READ)
            try:
                kwargs = PAGE_KWARGS[key](world) if key in PAGE_KWARGS else {}
            except KeyError as missing:
                problems.append(f"{key}: the matrix's world has no {missing}")
                continue
            if pattern.pattern.converters.keys() - kwargs.keys():
                problems.append(
                    f"{key} ({route}) needs {sorted(pattern.pattern.converters)}: say in "
                    "PAGE_KWARGS which objects fill them"
                )
                continue
        path = reverse(name, kwargs=kwargs) if name else _filled(route, kwargs)
        if key in PAGE_QUERY:
            path += "?" + PAGE_QUERY[key](world)
        found.append(Endpoint(key, route, area, path, access))
    return found, problems


# --- bodies a real client would send ---------------------------------------------------------


class PostForms(HTMLParser):
    """The POST forms of a page, each as (action, fields) with the values the page shows."""

    def __init__(self):
        super().__init__()
        self.forms: list[tuple[str | None, dict[str, list[str]]]] = []
        self._fields: dict[str, list[str]] | None = None
        self._select: str | None = None
        self._first_option: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        given = {key: value or "" for key, value in attrs}
        if tag == "form":
            self._fields = None
            if given.get("method", "get").lower() == "post":
                self._fields = {}
                self.forms.append((given.get("action"), self._fields))
            return
        if self._fields is None:
            return
        name = given.get("name")
        if tag == "input" and name and name != "csrfmiddlewaretoken":
            kind = given.get("type", "text").lower()
            if kind in ("submit", "button", "reset", "image", "file"):
                return
            if kind in ("checkbox", "radio") and "checked" not in given:
                return
            self._fields.setdefault(name, []).append(given.get("value", "on"))
        elif tag == "button" and name and name not in self._fields:
            self._fields[name] = [given.get("value", "")]
        elif tag == "select" and name:
            self._select, self._first_option = name, None
        elif tag == "option" and self._select:
            value = given.get("value", "")
            if self._first_option is None and value:
                self._first_option = value
            if "selected" in given:
                self._fields.setdefault(self._select, []).append(value)
        elif tag == "textarea" and name:
            self._textarea = name
            self._fields[name] = [""]

    def handle_endtag(self, tag):
        if tag == "select" and self._select and self._fields is not None:
            if self._select not in self._fields and self._first_option is not None:
                self._fields[self._select] = [self._first_option]
            self._select = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "form":
            self._fields = None

    def handle_data(self, data):
        if self._textarea and self._fields is not None:
            self._fields[self._textarea][0] += data


def page_forms(client: Client, pages: list[Endpoint]) -> dict[str, dict]:
    """The POST forms the administrator is shown on every page, by the path they post to."""
    bodies: dict[str, dict] = {}
    for page in pages:
        if "GET" not in page.access:
            continue
        response = client.get(page.path)
        if "text/html" not in response.get("Content-Type", ""):
            continue
        parser = PostForms()
        parser.feed(response.content.decode())
        for action, fields in parser.forms:
            target = urlsplit(urljoin(page.path, action or "")).path
            bodies.setdefault(target, {k: v if len(v) > 1 else v[0] for k, v in fields.items()})
    return bodies


def api_body(client: Client, endpoint: Endpoint) -> dict:
    """What the API shows of the object (or of the first in the list), sent back."""
    shown = client.get(endpoint.path)
    if shown.status_code != 200:
        return {}
    data = shown.json()
    if isinstance(data, dict) and "results" in data:
        data = data["results"][0] if data["results"] else {}
    return data if isinstance(data, dict) else {}


# --- asking -----------------------------------------------------------------------------------


def ask(client: Client, endpoint: Endpoint, method: str):
    body = endpoint.body if method not in SAFE else None
    if endpoint.area == "api":
        data, content_type = json.dumps(body or {}), "application/json"
    else:
        data = urlencode(body or {}, doseq=True)
        content_type = "application/x-www-form-urlencoded"
    if method in SAFE:
        return client.generic(method, endpoint.path)
    return client.generic(method, endpoint.path, data, content_type=content_type)


def _login_redirect(response, area: str) -> bool:
    """Sent to the portal's login page (or, in the Django admin, to either login page)."""
    logins = [resolve_url(settings.LOGIN_URL)] + (["/admin/login/"] if area == "admin" else [])
    return response.status_code == 302 and response["Location"].startswith(tuple(logins))


def verdict(endpoint: Endpoint, role: str, method: str, response) -> str | None:
    """What is wrong with the answer, or None."""
    status = response.status_code
    # 503 is the designed answer when a service the view needs is down (/healthz here, with
    # no Celery worker running); any other 5xx is a fault.
    if status >= 500 and status != 503:
        return f"{status}: a server error"
    if endpoint.area == "admin":
        if endpoint.name in ADMIN_PUBLIC:
            return None
        if role == ADMIN:
            # Past the admin site's gate; which methods each admin view answers, and which
            # records nobody may add or change (events, the audit log: 403), is the model
            # admin's own rule.
            return f"{status}: not let in" if _login_redirect(response, "admin") else None
        return None if _login_redirect(response, "admin") else f"{status}: not sent to log in"
    least = endpoint.access.get(method)
    if role != ANONYMOUS and endpoint.name in SENDS_SIGNED_IN_AWAY and status == 302:
        return None
    if least is None:
        if role == ANONYMOUS and endpoint.access.get("GET") != ANONYMOUS:
            expected = "login"
        else:
            # A role that may change nothing here may hear 403 before 405 (DRF checks the
            # permissions before the method).
            writers = [least for m, least in endpoint.access.items() if m not in SAFE]
            refused = method not in SAFE and not any(RANK[role] >= RANK[w] for w in writers)
            ok = status == 405 or (refused and status == 403)
            return None if ok else f"{status}: expected 405 (no such method)"
    elif RANK[role] >= RANK[least]:
        expected = "allowed"
    elif role == ANONYMOUS:
        expected = "login"
    else:
        expected = "refused"
    if expected == "login":
        if endpoint.area == "api":
            return None if status == 401 else f"{status}: expected 401"
        return None if _login_redirect(response, "page") else f"{status}: expected the login page"
    if expected == "refused":
        return None if status == 403 else f"{status}: expected 403"
    if status in (401, 403, 405):
        return f"{status}: refused, expected allowed"
    if _login_redirect(response, endpoint.area) and endpoint.name not in LOGOUTS:
        return f"{status}: sent to log in, expected allowed"
    return None


def database_rows() -> dict[str, list[str]]:
    """Every table's rows, but the sessions (a login writes the user's own)."""
    rows = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            if table == "django_session":
                continue
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows[table] = sorted(repr(row) for row in cursor.fetchall())
    return rows


# --- the world the matrix walks ---------------------------------------------------------------


def _playbook_refused(calls: list[str]):
    """The rack does not run here: a playbook finds its hosts unreachable, as a rack that is
    down would, and the call is noted."""

    def run_playbook(playbook, inventory, extravars=None, **kwargs):
        calls.append(playbook)
        return runner.PlaybookResult(playbook, "failed", 4, unreachable={"oss01": 1})

    return run_playbook


def _ansible_started(*args, **kwargs):
    raise AssertionError("the role matrix started ansible: nothing may reach a rack here")


@pytest.fixture
def matrix(world, rack_inventory, metrics_db, settings, tmp_path, monkeypatch):  # noqa: F811
    """One of everything a URL can name: jobs, audit entries, alert rules, events, silences,
    surveys, health rows, settings, preferences, a caught mail."""
    playbooks: list[str] = []
    assert get_resolver().url_patterns  # every view and the services they use, imported
    real = runner.run_playbook
    for module in list(sys.modules.values()):
        if getattr(module, "run_playbook", None) is real:
            monkeypatch.setattr(module, "run_playbook", _playbook_refused(playbooks))
    # Anything that would still start ansible is a 500 the matrix reports.
    monkeypatch.setattr(runner.ansible_runner, "run", _ansible_started)
    operator = world[OPERATOR]
    pair = rack_inventory[1]
    # Asking the workers waits for an answer that no worker gives here.
    monkeypatch.setattr(appliance, "CHECK_TIMEOUT_SECONDS", 0.1)
    job = create_job(KIND_SET_PARAM, "Set osc.*.max_rpcs_in_flight", pairs=[pair], user=operator)
    # Finished, so that the pair takes new acts and the job can be run again.
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, finished=timezone.now())
    audit = AuditEntry.objects.create(
        user=operator,
        job=job,
        username=operator.username,
        via=Via.WEB,
        act=Act.SET_PARAM,
        object_kind=ObjectKind.PARAMETER,
        object_name="osc.*.max_rpcs_in_flight",
        summary="Set osc.*.max_rpcs_in_flight=16",
        details={
            "filesystem": "scratch",
            "name": "osc.*.max_rpcs_in_flight",
            "value": "16",
            "old": {"oss01": {"osc.scratch-OST0000-osc.max_rpcs_in_flight": "8"}},
        },
    )
    rule = Rule.objects.create(
        name="Matrix red", condition=ConditionKind.HEALTH, health_state=HealthCondition.RED
    )
    event = Event.objects.create(
        rule=rule,
        severity=Severity.WARNING,
        fingerprint="matrix",
        object_label="oss01",
        object_key="server:1",
        summary="oss01 is red",
    )
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    Delivery.objects.create(transition=transition, address="ops@example.com")
    incident = IncidentGroup.objects.create(
        key="ssu:1", label="ssu01", severity=Severity.WARNING, status=GroupStatus.FIRING
    )
    Event.objects.filter(pk=event.pk).update(group=incident)
    mail = GroupMail.objects.create(group=incident, kind=GroupMailKind.FIRING)
    Delivery.objects.create(group_mail=mail, address="ops@example.com")
    silence = Silence.objects.create(
        object_key="server:2",
        object_label="oss02",
        ends=timezone.now() + timedelta(hours=1),
        reason="matrix",
        created_by=operator,
    )
    OwnerName.objects.create(kind="user", number=1000, name="alice", source="upload")
    server = Server.objects.get(hostname="oss01")
    Maintenance.objects.create(
        server=server,
        reason="matrix",
        ends=timezone.now() + timedelta(hours=1),
        ended=timezone.now(),
        created_by=operator,
    )
    array = StorageArray.objects.get(name="ssu01-a")
    drive = Drive.objects.filter(enclosure__array=array).order_by("pk").first()
    DriveReplacement.objects.create(drive=drive, created_by=operator, job=job)
    now = timezone.now()
    HealthStatus.objects.create(
        key="server:1", kind="server", name="oss01", status="green", since=now
    )
    StatusChange.objects.create(key="server:1", kind="server", name="oss01", new="green", at=now)
    for single_row in (HealthSettings, RetentionSettings, AnalyticsSettings):
        single_row.load()
    from portal.accounts.models import LoginFailure, Preferences

    Preferences.objects.get_or_create(user=world[ADMIN])
    LoginFailure.objects.create(username="nobody", address="192.0.2.1")
    caught = mailbox.Maildir(tmp_path / "caught", create=True)
    message = EmailMessage()
    message["To"], message["Subject"] = "ops@example.com", "matrix"
    message.set_content("caught")
    settings.OSTARA_CAUGHT_MAIL_DIR = str(tmp_path / "caught")
    # The portal's pages and API are walked as an administrator by role alone (the Admin
    # group), not by the superuser flag that has_role also honours; the Django admin as the
    # superuser that `ensure_admin` creates.
    role_admin = get_user_model().objects.create_user(username="role-admin")
    role_admin.groups.add(Group.objects.get(name=Role.ADMIN))
    return {
        "users": world,
        "role_admin": role_admin,
        "job": job,
        "audit": audit,
        "rule": rule,
        "event": event,
        "incident": incident,
        "silence": silence,
        "survey": stored_survey(1000.0),
        "mail_key": caught.add(message),
        "drive_address": f"{drive.enclosure.position},{drive.drawer},{drive.slot}",
        "playbooks": playbooks,
    }


def _client(user=None) -> Client:
    client = Client(raise_request_exception=False)
    client.session_user = user
    if user is not None:
        client.force_login(user)
    return client


def test_every_url_answers_each_role_as_the_roles_say(matrix):
    found, problems = endpoints(matrix)
    assert not problems, "\n".join(problems)
    users = matrix["users"]
    clients = {role: _client(users.get(role)) for role in ROLES}
    superuser = _client(users[ADMIN])
    clients[ADMIN] = _client(matrix["role_admin"])

    forms = page_forms(clients[ADMIN], [e for e in found if e.area == "page"])
    for endpoint in found:
        if endpoint.name in BODIES:
            endpoint.body = BODIES[endpoint.name](matrix)
        elif endpoint.area == "page":
            endpoint.body = forms.get(urlsplit(endpoint.path).path)
        elif endpoint.area == "api" and set(endpoint.access) - set(SAFE):
            endpoint.body = api_body(clients[ADMIN], endpoint)

    wrong: list[str] = []

    def walk(role: str, methods, chosen):
        for endpoint in chosen:
            client = superuser if role == ADMIN and endpoint.area == "admin" else clients[role]
            for method in methods:
                response = ask(client, endpoint, method)
                problem = verdict(endpoint, role, method, response)
                if problem and endpoint.area == "page" and endpoint.name not in PAGES:
                    problem += (
                        " (a page not in role_matrix_table.PAGES is READ: list it there with"
                        " who may use it)"
                    )
                if problem:
                    wrong.append(f"{role} {method} {endpoint.label}: {problem}")
                if endpoint.name in LOGOUTS and role != ANONYMOUS:
                    client.force_login(client.session_user)

    walk(ANONYMOUS, METHODS, found)
    walk(VIEWER, SAFE, found)
    before = database_rows()
    mutating = [m for m in METHODS if m not in SAFE]
    walk(VIEWER, mutating, [e for e in found if e.name not in OWN_ACCOUNT])
    after = database_rows()
    changed = sorted(table for table in before if before[table] != after.get(table))
    walk(VIEWER, mutating, [e for e in found if e.name in OWN_ACCOUNT])
    walk(OPERATOR, METHODS, found)
    walk(ADMIN, METHODS, found)

    if changed:
        wrong.append(f"the viewer's refused requests changed the tables {changed}")
    assert not wrong, f"{len(wrong)} answers not as the roles say:\n" + "\n".join(wrong)
    # The viewer's refusals were of real requests: the operator's same bodies did something.
    assert matrix["playbooks"], "no act reached the (absent) rack: the bodies are not real"
    assert Rule.objects.get(name="Matrix rule").created_by == users[OPERATOR]
    assert Silence.objects.filter(reason="matrix", created_by=users[OPERATOR]).exists()
    assert Survey.objects.filter(created_by=users[OPERATOR]).exists()


def test_every_url_pattern_is_walked(matrix):
    """The walk finds the views of every app, the API's routes and the Django admin."""
    found, _ = endpoints(matrix)
    names = {endpoint.name for endpoint in found}
    for expected in ("healthz", "login", "api-schema", "rule-detail", "admin:index"):
        assert expected in names
    for app in ("wizard", "inventory", "jobs", "alerts", "analytics", "surveys", "console"):
        assert any(name.startswith(f"{app}:") for name in names), app
    assert len(found) == sum(1 for _ in url_patterns())
