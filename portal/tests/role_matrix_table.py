"""The role matrix's expectations (``test_role_matrix``): who may use each page with which method,
which pages are settings, operations or one's own account, what fills each page's path, and the
bodies a real client would send. A new page that is not a plain read is listed here."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from portal.accounts.choices import Role
from portal.alerts.choices import ConditionKind, HealthCondition, Severity

METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
SAFE = ("GET", "HEAD", "OPTIONS")
ANONYMOUS = "anonymous"
VIEWER, OPERATOR, ADMIN = Role.VIEWER.value, Role.OPERATOR.value, Role.ADMIN.value
ROLES = (ANONYMOUS, VIEWER, OPERATOR, ADMIN)
RANK = {role: rank for rank, role in enumerate(ROLES)}

# --- who may use each page: method -> the least role; a method not listed does not exist (405)

READ = {"GET": VIEWER, "HEAD": VIEWER}
# A page with a form of the rack's daily work: everyone reads it, operators send it.
OPERATIONS = {**READ, "POST": OPERATOR}
# A page of the appliance's settings: everyone reads them, administrators change them.
SETTINGS = {**READ, "POST": ADMIN}
# A button of the daily work, posted from another page.
ACTION = {"POST": OPERATOR}
# A page that is itself the start of an act (the wizard, an act's confirmation): operators only.
OPERATOR_PAGE = {"GET": OPERATOR, "HEAD": OPERATOR, "POST": OPERATOR}
# What a signed-in user does to their own account only (closing the tour, logging out).
PERSONAL = {"POST": VIEWER}

# Every page by URL name; a page not listed is READ. A new page that is not a plain read fails
# the test until it is listed here.
PAGES: dict[str, dict[str, str]] = {
    "healthz": {"GET": ANONYMOUS, "HEAD": ANONYMOUS},
    # Django's login form takes a PUT as it takes a POST.
    "login": {m: ANONYMOUS for m in ("GET", "HEAD", "OPTIONS", "POST", "PUT")},
    "logout": {"POST": VIEWER, "OPTIONS": VIEWER},
    "tour-dismiss": PERSONAL,
    # Each user changes their own password.
    "password_change": {**READ, "POST": VIEWER},
    # The API's documentation is a page for people: anonymous visitors go to the login page.
    "api-docs": READ,
    "wizard:start": {"GET": OPERATOR, "HEAD": OPERATOR},
    "wizard:filesystem": OPERATOR_PAGE,
    "wizard:servers": OPERATOR_PAGE,
    "wizard:arrays": OPERATOR_PAGE,
    "wizard:review": OPERATOR_PAGE,
    "wizard:download-spec": {"GET": OPERATOR, "HEAD": OPERATOR},
    "wizard:upload-spec": ACTION,
    "wizard:reset": ACTION,
    "jobs:job-cancel": ACTION,
    "jobs:job-retry": ACTION,
    # The user's own choice of which alerts are mailed to them.
    "alerts:active": {**READ, "POST": VIEWER},
    "alerts:acknowledge": ACTION,
    "alerts:incident-acknowledge": ACTION,
    "alerts:rule-new": OPERATIONS,
    "alerts:rule": OPERATIONS,
    "alerts:rule-delete": ACTION,
    "alerts:silences": OPERATIONS,
    "alerts:silence-end": ACTION,
    # Sending a test mail checks the appliance's mail settings.
    "alerts:mail": SETTINGS,
    "alerts:mail-relay": SETTINGS,
    "analytics:settings": SETTINGS,
    # The names of user and group ids, uploaded or read from NSS.
    "usage:names": SETTINGS,
    "health:thresholds": SETTINGS,
    "health:retention": SETTINGS,
    "surveys:new": OPERATOR_PAGE,
    "console:server-act": OPERATOR_PAGE,
    "console:target-act": OPERATOR_PAGE,
    # Reading a parameter is a GET for everyone; setting one is a POST for operators.
    "console:parameters": OPERATIONS,
    "console:drive": OPERATIONS,
    "console:revert": OPERATOR_PAGE,
}
# The API by URL name where its viewset's own methods do not say it (reads for everyone, the
# rest for operators): a route for users or settings would be listed here for ADMIN. The
# schema and the API's root are read by every signed-in client.
API: dict[str, dict[str, str]] = {
    "api-schema": {"GET": VIEWER, "HEAD": VIEWER, "OPTIONS": VIEWER},
    "api-root": {"GET": VIEWER, "HEAD": VIEWER, "OPTIONS": VIEWER},
}
# Views personal to the user: the viewer may use them, so they run outside the check that a
# viewer changed nothing.
OWN_ACCOUNT = {"logout", "admin:logout", "tour-dismiss", "alerts:active", "password_change"}
# Logging out answers with the login page; the client logs in again after it.
LOGOUTS = {"logout", "admin:logout"}
# Pages that send a signed-in user elsewhere whatever the method (the login page: to the
# dashboard).
SENDS_SIGNED_IN_AWAY = {"login"}
# The Django admin's own public views.
ADMIN_PUBLIC = {"admin:login", "admin:logout"}

# --- what fills each page's path (and the query it needs to show something) ------------------

PAGE_KWARGS = {
    "wizard:download-spec": lambda w: {"role": "ssu"},
    "inventory:ssu-detail": lambda w: {"name": "ssu01"},
    "jobs:job-detail": lambda w: {"pk": w["job"].pk},
    "jobs:job-progress": lambda w: {"pk": w["job"].pk},
    "jobs:job-cancel": lambda w: {"pk": w["job"].pk},
    "jobs:job-retry": lambda w: {"pk": w["job"].pk},
    "alerts:event": lambda w: {"pk": w["event"].pk},
    "alerts:acknowledge": lambda w: {"pk": w["event"].pk},
    "alerts:incident": lambda w: {"pk": w["incident"].pk},
    "alerts:incident-acknowledge": lambda w: {"pk": w["incident"].pk},
    "alerts:rule": lambda w: {"pk": w["rule"].pk},
    "alerts:rule-delete": lambda w: {"pk": w["rule"].pk},
    "alerts:silence-end": lambda w: {"pk": w["silence"].pk},
    "alerts:caught-message": lambda w: {"key": w["mail_key"]},
    "alerts:caught-message-html": lambda w: {"key": w["mail_key"]},
    "analytics:view": lambda w: {"name": "load"},
    "surveys:detail": lambda w: {"pk": w["survey"].pk},
    "surveys:live": lambda w: {"pk": w["survey"].pk},
    "surveys:history": lambda w: {"name": "ssu01"},
    "surveys:new": lambda w: {"name": "ssu01"},
    "console:server-act": lambda w: {"hostname": "oss01", "act": "failover"},
    "console:target-act": lambda w: {"label": "scratch-OST0000", "act": "failover"},
    "console:array": lambda w: {"name": "ssu01-a"},
    "console:drive": lambda w: {"name": "ssu01-a", "address": w["drive_address"]},
    "console:revert": lambda w: {"pk": w["audit"].pk},
    "health:ssu": lambda w: {"name": "ssu01"},
    "health:server": lambda w: {"hostname": "oss01"},
    "health:target": lambda w: {"label": "scratch-OST0000"},
    "health:server-clients": lambda w: {"hostname": "oss01"},
    "health:target-clients": lambda w: {"label": "scratch-OST0000"},
    "health:chart": lambda w: {"chart": "throughput"},
}
PAGE_QUERY = {
    "health:chart": lambda w: "kind=filesystem&name=scratch",
    "analytics:cell": lambda w: "by=server&name=oss01&start=1700000000&end=1700000060",
    "surveys:compare": lambda w: f"a={w['survey'].pk}&b={w['survey'].pk}",
    "alerts:panel": lambda w: "key=ssu:1",
}
# Bodies a real client would send where the form on the page is empty until someone types, or
# where there is no page: with them a viewer's refusal cannot be a form's complaint.
BODIES = {
    "alerts:rule-new": lambda w: {
        "name": "Matrix rule",
        "severity": Severity.WARNING,
        "enabled": "on",
        "condition": ConditionKind.HEALTH,
        "health_state": HealthCondition.RED,
        "scope": "all",
        "for_seconds": "0",
        "clear_seconds": "0",
        "repeat_seconds": "3600",
    },
    "alerts:silences": lambda w: {
        "object_key": "server:1",
        "object_label": "oss01",
        "ends": (timezone.now() + timedelta(hours=2)).strftime("%Y-%m-%d %H:%M"),
        "reason": "matrix",
    },
    "alerts:acknowledge": lambda w: {"comment": "seen by the matrix"},
    "alerts:incident-acknowledge": lambda w: {"comment": "seen by the matrix"},
    "alerts:mail": lambda w: {"address": "someone@example.com"},
    "alerts:mail-relay": lambda w: {
        "host": "relay.example.org",
        "port": "25",
        "from_address": "ostara@example.org",
    },
    "console:parameters": lambda w: {
        "filesystem": "scratch",
        "name": "osc.*.max_rpcs_in_flight",
        "value": "16",
        "servers": ["oss01"],
    },
    "console:drive": lambda w: {"step": "locate"},
    "usage:names": lambda w: {
        "kind": "user",
        "source": "upload",
        "text": "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n",
    },
    "console:server-act": lambda w: {"reason": "matrix", "hours": "1"},
    "surveys:new": lambda w: {"scope": "ssu", "confirm": "on"},
    "rule-list": lambda w: {
        "name": "Matrix API rule",
        "condition": ConditionKind.HEALTH,
        "health_state": HealthCondition.RED,
    },
    "event-acknowledge": lambda w: {"comment": "seen"},
    "incidentgroup-acknowledge": lambda w: {"comment": "seen"},
    "silence-list": lambda w: {
        "object_key": "server:1",
        "object_label": "oss01",
        "ends": (timezone.now() + timedelta(hours=2)).isoformat(),
        "reason": "matrix",
    },
    "survey-list": lambda w: {"ssu": "ssu01", "scope": "ssu", "confirm": True},
    "console-failover": lambda w: {"server": "oss01", "confirm": True},
    "console-failback": lambda w: {"server": "oss01", "confirm": True},
    "console-maintenance": lambda w: {
        "server": "oss01",
        "on": True,
        "hours": 1,
        "reason": "matrix",
        "confirm": True,
    },
    "console-drive": lambda w: {
        "array": "ssu01-a",
        "drive": w["drive_address"],
        "step": "locate",
        "confirm": True,
    },
    "console-set-param": lambda w: {
        "filesystem": "scratch",
        "name": "osc.*.max_rpcs_in_flight",
        "value": "16",
        "servers": ["oss01"],
        "confirm": True,
    },
    "auditentry-revert": lambda w: {"confirm": True},
}
