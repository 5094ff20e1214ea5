"""Issue 28, finding 3: no text stalls alert mail. A rule name or address holding a line break
or another control character is refused at the form and the API (over HTTP, on the running
portal); a mail that cannot be written even so (a name stored before that refusal, a broken
template) fails for good with its reason on the event page, and the same recipient's next mail
still reaches a real SMTP server on loopback."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
import requests
from django.apps import apps
from django.utils import timezone

from portal.alerts import tasks
from portal.alerts.choices import ConditionKind, DeliveryStatus, Severity, TransitionKind
from portal.alerts.models import Delivery, Event, Rule, Transition
from portal.alerts.services.outbox import STALE_CLAIM_SECONDS, deliver_due

pytestmark = pytest.mark.django_db(transaction=True)

RULE_FORM = {
    "name": "Anything red on the rack",
    "severity": "critical",
    "enabled": "on",
    "condition": "health",
    "health_state": "red",
    "for_seconds": "0",
    "clear_seconds": "0",
    "repeat_seconds": "0",
    "scope": "all",
    "extra_addresses": "ops@example.org",
    "save": "1",
}
# CR LF (Django refuses the header), a vertical tab (Python's mail package refuses it), an
# address whose quoted local part holds a control character (a valid address otherwise).
BAD_INPUT = [
    ("name", "x\r\nBcc: x@example"),
    ("name", "x\x0bBcc: x@example"),
    ("extra_addresses", '"ops\x01"@example.org'),
]


class Portal:
    """The running portal over HTTP: an operator's browser session, and the API with Basic
    authentication."""

    def __init__(self, url: str, client) -> None:
        client.login(username="operator", password="pw-operator-123!")
        self.url = url
        self.browser = requests.Session()
        self.browser.cookies.set("sessionid", client.cookies["sessionid"].value)

    def get(self, path: str) -> requests.Response:
        return self.browser.get(self.url + path, allow_redirects=False, timeout=30)

    def post_form(self, path: str, form: dict) -> requests.Response:
        self.get(path)  # the form's page sets the CSRF cookie
        token = self.browser.cookies["csrftoken"]
        return self.browser.post(
            self.url + path,
            data={**form, "csrfmiddlewaretoken": token},
            headers={"Referer": self.url + path},
            allow_redirects=False,
            timeout=30,
        )

    def post_api(self, path: str, body: dict) -> requests.Response:
        return requests.post(
            self.url + path, json=body, auth=("operator", "pw-operator-123!"), timeout=30
        )


@pytest.fixture
def portal(live_server, client, world) -> Portal:
    return Portal(live_server.url, client)


def field_error(page: str, field: str) -> str:
    marker = f'id="id_{field}-error"'
    assert marker in page, f"no error at the field {field}"
    return page.split(marker)[1].split("</div>")[0]


@pytest.mark.parametrize(("field", "value"), BAD_INPUT)
def test_a_control_character_is_refused_at_its_field_by_the_form_and_the_api(portal, field, value):
    before = Rule.objects.count()

    page = portal.post_form("/alerts/rules/new/", {**RULE_FORM, field: value})
    assert page.status_code == 200  # the form again, not a redirect to the saved rule
    assert "control character" in field_error(page.text, field)

    body = {
        "name": RULE_FORM["name"],
        "condition": "health",
        "health_state": "red",
        "extra_addresses": "ops@example.org",
        field: value,
    }
    answer = portal.post_api("/api/v1/alert-rules/", body)
    assert answer.status_code == 400, answer.text
    assert list(answer.json()) == [field]
    assert "control character" in " ".join(answer.json()[field])

    assert Rule.objects.count() == before
    # The same rule without the control character is taken.
    taken = portal.post_api("/api/v1/alert-rules/", {**body, field: RULE_FORM[field]})
    assert taken.status_code == 201, taken.text


def firing(rule_name: str, address: str, object_label: str = "oss03") -> Delivery:
    """A rule (as stored, unchecked: data from before the refusal), its event and the firing
    mail to one address."""
    rule, _ = Rule.objects.get_or_create(
        name=rule_name, defaults={"severity": Severity.CRITICAL, "condition": ConditionKind.HEALTH}
    )
    event = Event.objects.create(
        rule=rule,
        severity=rule.severity,
        fingerprint=f"server:{object_label}",
        object_label=object_label,
        summary=f"{object_label} is powered off",
    )
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    return Delivery.objects.create(transition=transition, address=address)


@pytest.mark.parametrize(
    ("rule_name", "object_label", "reason"),
    [
        ("Server down\r\nBcc: x@example", "oss03", "newlines"),
        ("Server down", "oss03\x0bBcc: x@example", "embedded header"),
    ],
)
def test_a_mail_that_cannot_be_written_fails_for_good_and_the_next_one_is_delivered(
    portal, smtp, rule_name, object_label, reason
):
    stuck = firing(rule_name, "ops@example.org", object_label)
    later = firing("Volume group degraded", "ops@example.org", "ssu01-a-vg03")

    result = tasks.deliver()  # what the worker runs

    assert result["sent"] == 1
    stuck.refresh_from_db()
    assert stuck.status == DeliveryStatus.FAILED
    assert reason in stuck.last_error
    # The same address's next mail is not held back behind it.
    (message,) = smtp.mailbox.messages
    assert message["To"] == "ops@example.org"
    assert message["Subject"] == ("[Ostara CRITICAL] Firing: ssu01-a-vg03 - Volume group degraded")
    assert Delivery.objects.get(pk=later.pk).status == DeliveryStatus.SENT

    # Failed for good: not tried again, however long the outbox runs.
    deliver_due(timezone.now() + timedelta(seconds=STALE_CLAIM_SECONDS + 1, days=1))
    stuck.refresh_from_db()
    assert (stuck.status, stuck.attempts) == (DeliveryStatus.FAILED, 1)
    assert len(smtp.mailbox.messages) == 1

    page = portal.get(f"/alerts/events/{stuck.transition.event_id}/")
    assert page.status_code == 200
    mail_cell = page.text.split("ops@example.org:")[1].split("</td>")[0]
    assert "Failed for good" in mail_cell
    assert "the mail could not be written" in mail_cell and reason in mail_cell


def test_a_broken_mail_template_fails_the_delivery_for_good_and_mail_resumes_once_fixed(
    smtp, settings, tmp_path
):
    broken = tmp_path / "alerts" / "mail"
    broken.mkdir(parents=True)
    (broken / "transition.txt").write_text("{{ event.summary|no_such_filter }}")
    working = settings.TEMPLATES
    settings.TEMPLATES = [{**working[0], "DIRS": [tmp_path, *working[0]["DIRS"]]}]

    stuck = firing("Server down", "ops@example.org")
    assert deliver_due().sent == []
    stuck.refresh_from_db()
    assert stuck.status == DeliveryStatus.FAILED
    assert "TemplateSyntaxError" in stuck.last_error and "no_such_filter" in stuck.last_error

    settings.TEMPLATES = working
    later = firing("Server down", "ops@example.org", "oss04")
    assert deliver_due().sent == [later.pk]
    assert [m["Subject"] for m in smtp.mailbox.messages] == [
        "[Ostara CRITICAL] Firing: oss04 - Server down"
    ]


@pytest.mark.django_db
def test_rule_names_stored_before_the_refusal_are_put_on_one_line_by_the_migration():
    migration = importlib.import_module("portal.alerts.migrations.0005_rule_names_on_one_line")
    for name in ("Server down", "Server\r\ndown", "Hot\x0binlet\u202e", "Disk  full"):
        Rule.objects.create(name=name, condition=ConditionKind.HEALTH)
    migration.rule_names_on_one_line(apps, None)
    assert sorted(Rule.objects.filter(builtin="").values_list("name", flat=True)) == [
        "Disk  full",  # no control character: left as it was
        "Hot inlet",
        "Server down",
        "Server down (2)",
    ]
