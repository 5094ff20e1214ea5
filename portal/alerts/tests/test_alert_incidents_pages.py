"""The Alerts page, the incident page and the incidents API, through Django's test client: an
incident shows its alerts (the cause first, the muted after it, each with why), its mails and
to whom they went (gone out only once they have); operators acknowledge an incident and with it
each of its firing alerts, viewers read. During a mail outage the Alerts page says the relay is
down; an administrator without a mail address is shown where to set it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from portal.alerts.choices import (
    DeliveryStatus,
    EventStatus,
    GroupMailKind,
    GroupStatus,
    Severity,
    TransitionKind,
)
from portal.alerts.models import Delivery, Event, GroupMail, IncidentGroup, Rule, Transition
from portal.alerts.services.relay import check_mail
from portal.tests.smtp import free_port

pytestmark = pytest.mark.django_db

T0 = timezone.now().replace(microsecond=0) - timedelta(minutes=10)


def signed_in(client, who: str):
    client.login(username=who, password=f"pw-{who}-123!")
    return client


def rule(name: str, severity: str = Severity.CRITICAL, **fields) -> Rule:
    made, _ = Rule.objects.get_or_create(
        name=name,
        defaults={"severity": severity, "condition": "health", "health_state": "red", **fields},
    )
    return made


@pytest.fixture
def incident(world) -> IncidentGroup:
    """ssu01's incident: oss02 is down (the cause), two of its OSTs on its partner (muted by
    it), one warning that has resolved already; its firing mail went to two addresses."""
    group = IncidentGroup.objects.create(
        key="ssu:1",
        label="ssu01",
        severity=Severity.CRITICAL,
        status=GroupStatus.FIRING,
        opened=T0,
    )
    red, partner = rule("Anything red"), rule("Target on its failover server", Severity.WARNING)
    members = {}
    for label, url, which, summary, seconds in [
        ("scratch-OST0003", "/health/targets/scratch-OST0003/", partner, "runs on oss01", 5),
        ("oss02", "/health/servers/oss02/", red, "powered off: its BMC says so", 0),
        ("scratch-OST0001", "/health/targets/scratch-OST0001/", partner, "runs on oss01", 4),
    ]:
        members[label] = Event.objects.create(
            rule=which,
            severity=which.severity,
            fingerprint=url,
            object_label=label,
            object_url=url,
            summary=summary,
            opened=T0 + timedelta(seconds=seconds),
            group=group,
        )
    hot = rule("Warm", Severity.WARNING, health_state="hot")
    members["ssu01-a"] = Event.objects.create(
        rule=hot,
        severity=Severity.WARNING,
        fingerprint="array:1",
        object_label="ssu01-a",
        summary="inlet at 41 °C",
        status=EventStatus.RESOLVED,
        opened=T0 + timedelta(seconds=2),
        resolved=T0 + timedelta(minutes=3),
        group=group,
    )
    muted = "muted: oss02 is down"
    group.state = {
        "members": {
            str(members["oss02"].pk): {"muted": ""},
            str(members["scratch-OST0001"].pk): {"muted": muted},
            str(members["scratch-OST0003"].pk): {"muted": muted},
            str(members["ssu01-a"].pk): {"muted": ""},
        }
    }
    group.save()
    mail = GroupMail.objects.create(
        group=group, kind=GroupMailKind.FIRING, at=T0 + timedelta(seconds=30), members=[{}] * 4
    )
    Delivery.objects.create(
        group_mail=mail,
        address="ops@example.org",
        status=DeliveryStatus.SENT,
        sent_at=T0 + timedelta(seconds=31),
    )
    Delivery.objects.create(
        group_mail=mail,
        address="storage@example.org",
        status=DeliveryStatus.PENDING,
        last_error="451 try again later",
    )
    group.members_by_label = members
    return group


def test_the_alerts_page_shows_an_incident_with_its_alerts_the_cause_first(client, incident):
    page = signed_in(client, "viewer").get("/alerts/")
    shown = page.context["incidents"]
    assert [group.label for group in shown] == ["ssu01"]
    # The cause first, then the resolved warning, the muted after them, each with why.
    order = [event.object_label for event in shown[0].members]
    assert order == ["oss02", "ssu01-a", "scratch-OST0001", "scratch-OST0003"]
    html = page.content.decode()
    assert "4 alerts" in html
    assert "oss02: powered off: its BMC says so" in html  # the first cause, on the closed line
    assert html.count("muted: oss02 is down") == 2
    assert 'href="/health/targets/scratch-OST0001/"' in html  # each object links to its page
    for event in incident.members_by_label.values():
        assert f'href="/alerts/events/{event.pk}/"' in html
    assert f'href="/alerts/incidents/{incident.pk}/"' in html
    assert "Acknowledge the incident" not in html  # a viewer reads


def test_an_alert_that_fired_before_grouping_is_shown_on_its_own(client, world):
    Event.objects.create(
        rule=rule("Anything red"),
        severity=Severity.CRITICAL,
        fingerprint="server:1",
        object_label="oss01",
        summary="its sensor has gone silent",
    )
    page = signed_in(client, "viewer").get("/alerts/")
    assert page.context["incidents"] == []
    assert [event.object_label for event in page.context["ungrouped"]] == ["oss01"]
    assert "Alerts in no incident" in page.content.decode()


def test_an_operator_acknowledges_an_incident_and_each_of_its_firing_alerts(client, incident):
    operator = signed_in(client, "operator")
    assert "Acknowledge the incident" in operator.get("/alerts/").content.decode()
    answer = operator.post(
        f"/alerts/incidents/{incident.pk}/acknowledge/",
        {"comment": "PSU swap at 14:00", "next": "/alerts/"},
        follow=True,
    )
    html = answer.content.decode()
    assert "ssu01: acknowledged with its 3 firing alerts, no more reminders." in html
    assert "acknowledged by operator" in html and "PSU swap at 14:00" in html
    incident.refresh_from_db()
    assert incident.acknowledged_by.username == "operator"
    assert incident.state["acknowledged"] is True
    for label, event in incident.members_by_label.items():
        event.refresh_from_db()
        if label == "ssu01-a":  # resolved already: nothing to stop
            assert event.acknowledged_at is None
            continue
        assert event.acknowledged_by.username == "operator"
        assert event.acknowledge_comment == "PSU swap at 14:00"
        assert event.timing_state["acknowledged"] is True
        told = Transition.objects.get(event=event, kind=TransitionKind.ACKNOWLEDGED)
        assert told.detail == "by operator: PSU swap at 14:00"
    again = operator.post(f"/alerts/incidents/{incident.pk}/acknowledge/", follow=True)
    assert "ssu01: already acknowledged by operator" in again.content.decode()


def test_a_viewer_cannot_acknowledge_an_incident(client, incident):
    answer = signed_in(client, "viewer").post(f"/alerts/incidents/{incident.pk}/acknowledge/")
    assert answer.status_code == 403
    incident.refresh_from_db()
    assert incident.acknowledged_at is None
    assert not Event.objects.filter(acknowledged_at__isnull=False).exists()


def test_the_incident_page_shows_its_alerts_and_the_mail_it_sent(client, incident):
    html = signed_in(client, "viewer").get(f"/alerts/incidents/{incident.pk}/").content.decode()
    assert "Incident: ssu01" in html
    assert "First cause" in html and "oss02: powered off: its BMC says so" in html
    for event in incident.members_by_label.values():
        assert f'href="/alerts/events/{event.pk}/"' in html
    assert "lasted 2" in html  # ssu01-a's warning resolved after 2 min 58 s
    assert "Firing" in html and "ops@example.org" in html and "Sent" in html
    assert "storage@example.org" in html and "451 try again later" in html
    assert "Acknowledge the incident" not in html
    assert client.get("/alerts/incidents/999999/").status_code == 404


def test_an_event_page_and_the_history_link_to_its_incident(client, incident):
    event = incident.members_by_label["scratch-OST0001"]
    viewer = signed_in(client, "viewer")
    html = viewer.get(f"/alerts/events/{event.pk}/").content.decode()
    assert f'href="/alerts/incidents/{incident.pk}/"' in html
    history = viewer.get("/alerts/history/").content.decode()
    assert history.count(f'href="/alerts/incidents/{incident.pk}/"') == 4  # each of its alerts


def test_the_api_lists_incidents_with_their_alerts_and_mails(client, incident):
    IncidentGroup.objects.create(
        key="ssu:2", label="ssu02", severity=Severity.WARNING, status=GroupStatus.RESOLVED
    )
    signed_in(client, "viewer")
    listed = client.get("/api/v1/alert-incidents/?status=firing").json()
    assert listed["count"] == 1
    (shown,) = listed["results"]
    assert shown["label"] == "ssu01" and shown["severity"] == "critical"
    assert [m["object_label"] for m in shown["members"]] == [
        "oss02",
        "ssu01-a",
        "scratch-OST0001",
        "scratch-OST0003",
    ]
    assert [m["muted"] for m in shown["members"]] == ["", "", *["muted: oss02 is down"] * 2]
    (mail,) = shown["mails"]
    assert mail["kind"] == "firing"
    assert [(d["address"], d["status"]) for d in mail["deliveries"]] == [
        ("ops@example.org", "sent"),
        ("storage@example.org", "pending"),
    ]
    warnings = client.get("/api/v1/alert-incidents/?severity=warning").json()
    assert [g["label"] for g in warnings["results"]] == ["ssu02"]
    refused = client.get("/api/v1/alert-incidents/?status=burning")
    assert refused.status_code == 400
    assert refused.json() == {"status": ["'burning' is not one of pending, firing, resolved"]}
    one = client.get(f"/api/v1/alert-incidents/{incident.pk}/").json()
    assert len(one["members"]) == 4


def test_the_api_acknowledges_an_incident_for_operators_only(client, incident):
    path = f"/api/v1/alert-incidents/{incident.pk}/acknowledge/"
    signed_in(client, "viewer")
    assert client.post(path, {"comment": "x"}, content_type="application/json").status_code == 403
    signed_in(client, "operator")
    acked = client.post(path, {"comment": "looking"}, content_type="application/json")
    assert acked.status_code == 200
    body = acked.json()
    assert body["acknowledged_by"] == "operator" and body["acknowledge_comment"] == "looking"
    firing = [m for m in body["members"] if m["status"] == "firing"]
    assert len(firing) == 3 and all(m["acknowledged_by"] == "operator" for m in firing)
    twice = client.post(path, {}, content_type="application/json")
    assert twice.status_code == 409
    assert twice.json() == {"detail": "already acknowledged by operator"}


def test_a_rule_says_how_its_alerts_are_grouped(client, world):
    form = {
        "name": "VG degraded",
        "severity": "warning",
        "enabled": "on",
        "condition": "health",
        "health_state": "volume_group",
        "for_seconds": "0",
        "clear_seconds": "0",
        "repeat_seconds": "0",
        "scope": "all",
        "save": "1",
    }
    operator = signed_in(client, "operator")
    assert "One incident (one mail) per" in operator.get("/alerts/rules/new/").content.decode()
    refused = operator.post("/alerts/rules/new/", {**form, "group_by": "rack"})
    assert "rack is not one of the available choices" in str(
        refused.context["form"].errors["group_by"]
    )
    assert operator.post("/alerts/rules/new/", {**form, "group_by": "array"}).status_code == 302
    assert Rule.objects.get(name="VG degraded").group_by == "array"
    # A form or a script that leaves it out gets the default: the SSU or server pair.
    operator.post("/alerts/rules/new/", {**form, "name": "VG failed"})
    assert Rule.objects.get(name="VG failed").group_by == "auto"
    api = operator.get("/api/v1/alert-rules/").json()["results"]
    assert {r["name"]: r["group_by"] for r in api if r["name"].startswith("VG")} == {
        "VG degraded": "array",
        "VG failed": "auto",
    }


def test_an_incident_not_mailed_yet_says_it_waits_and_an_ended_one_how_long_it_lasted(
    client, incident
):
    IncidentGroup.objects.filter(pk=incident.pk).update(status=GroupStatus.PENDING)
    viewer = signed_in(client, "viewer")
    assert "Waiting to be mailed" in viewer.get("/alerts/").content.decode()
    Event.objects.filter(group=incident).update(
        status=EventStatus.RESOLVED, resolved=T0 + timedelta(minutes=40)
    )
    IncidentGroup.objects.filter(pk=incident.pk).update(
        status=GroupStatus.RESOLVED, resolved=T0 + timedelta(minutes=40)
    )
    assert viewer.get("/alerts/").context["incidents"] == []  # over: in its page and the API
    html = signed_in(client, "operator").get(f"/alerts/incidents/{incident.pk}/").content
    html = html.decode()
    assert "Resolved" in html and "lasted 40\xa0minutes" in html
    assert "muted: oss02 is down" not in html  # a resolved alert is no longer muted
    assert "Acknowledge the incident" not in html  # over: nothing left to acknowledge


DOWN = "The mail relay is down: no alert mail goes out"


@pytest.fixture
def relay_down(settings):
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nothing listens


def test_the_alerts_page_says_the_relay_is_down_and_the_mail_waits(
    client, incident, relay_down, settings
):
    html = signed_in(client, "viewer").get("/alerts/").content.decode()
    assert DOWN in html
    # Said once, in words: "…; 1 alert mail waits in the outbox. It goes out once …".
    assert "1 alert mail waits in the outbox. It goes out once the relay answers" in html
    assert html.count("in the outbox") == 1 and "mail(s)" not in html
    assert 'href="/alerts/settings/mail/"' in html
    tile = check_mail()  # what the dashboard's mail tile shows
    assert not tile.ok
    assert f"No answer at {settings.EMAIL_HOST}:{settings.EMAIL_PORT}" in html
    assert tile.detail[1:] in html


def test_the_alerts_page_says_nothing_of_the_relay_when_it_answers(client, world, smtp):
    assert DOWN not in signed_in(client, "viewer").get("/alerts/").content.decode()


def test_an_incident_mail_waiting_in_the_outbox_is_not_said_to_have_gone_out(
    client, incident, relay_down
):
    waiting = Delivery.objects.get(address="storage@example.org")
    waiting.attempts = 3
    waiting.save()
    event = incident.members_by_label["oss02"]
    viewer = signed_in(client, "viewer")
    for page in (f"/alerts/events/{event.pk}/", f"/alerts/incidents/{incident.pk}/"):
        html = viewer.get(page).content.decode()
        assert "went out" not in html, page
        assert (
            "its firing mail waits in the outbox for storage@example.org, tried 3 times "
            "(451 try again later); it goes out when the mail relay takes it"
        ) in html.replace("Its firing", "its firing"), page
    assert "(tried 3 times, next try" in html
    waiting.status, waiting.sent_at = DeliveryStatus.SENT, timezone.now()
    waiting.save()
    html = viewer.get(f"/alerts/events/{event.pk}/").content.decode()
    assert "its firing mail went out at " in html
    assert "to ops@example.org, storage@example.org" in html


def test_an_administrator_without_an_address_is_shown_where_to_set_it(client, world):
    html = signed_in(client, "admin").get("/alerts/").content.decode()
    assert "ask an administrator" not in html
    link = f'<a href="/admin/auth/user/{world["admin"].pk}/change/">set it on your user page</a>'
    assert link in html
    assert client.get(f"/admin/auth/user/{world['admin'].pk}/change/").status_code == 200
    operator = signed_in(client, "operator").get("/alerts/").content.decode()
    assert "no alert mail reaches you: ask an administrator to set one" in operator
    assert "/admin/auth/user/" not in operator
