"""The alert console's pages, its API and its command, through Django's test client: what is
refused and why, who may change what, what is shown."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from portal.alerts.choices import EventStatus
from portal.alerts.models import Event, Rule, Silence, Transition
from portal.health.models import HealthStatus

pytestmark = pytest.mark.django_db

VALID = {
    "name": "OST nearly full",
    "severity": "critical",
    "enabled": "on",
    "condition": "threshold",
    "measurement": "ost",
    "field": "kbytes_avail",
    "percent_of": "kbytes_total",
    "comparison": "<",
    "threshold": "10",
    "for_seconds": "60",
    "clear_seconds": "60",
    "repeat_seconds": "0",
    "scope": "all",
    "extra_addresses": "ops@example.org, storage@example.org",
    "save": "1",
}


def red_rule() -> Rule:
    """The default rule (an earlier transactional test may have flushed the defaults)."""
    rule, _ = Rule.objects.get_or_create(
        name="Anything red",
        defaults={"severity": "critical", "condition": "health", "health_state": "red"},
    )
    return rule


def signed_in(client, who: str):
    client.login(username=who, password=f"pw-{who}-123!")
    return client


def errors(response) -> dict:
    return {name: " ".join(e) for name, e in response.context["form"].errors.items()}


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"field": "kbytes_used"}, "field", "measurement 'ost' has no field 'kbytes_used'"),
        ({"percent_of": "blocks"}, "percent_of", "has no field 'blocks'"),
        ({"for_seconds": "-60"}, "for_seconds", "cannot be negative"),
        ({"repeat_seconds": "-1"}, "repeat_seconds", "cannot be negative"),
        (
            {"extra_addresses": "ops@example.org, not-an-address"},
            "extra_addresses",
            "'not-an-address' is not an e-mail address",
        ),
        ({"comparison": ""}, "comparison", "choose how the value compares"),
        ({"threshold": ""}, "threshold", "give the threshold"),
        ({"measurement": ""}, "measurement", "choose the measurement"),
        ({"scope": "ssu", "scope_value": "ssu09"}, "scope_value", "there is no ssu named 'ssu09'"),
        ({"scope": "kind", "scope_value": "rack"}, "scope_value", "name a kind of object"),
        ({"condition": "health", "health_state": ""}, "health_state", "choose which health state"),
    ],
)
def test_a_bad_rule_is_refused_at_its_field_and_nothing_is_saved(
    client, world, change, field, reason
):
    response = signed_in(client, "operator").post("/alerts/rules/new/", {**VALID, **change})
    assert response.status_code == 200
    assert reason in errors(response)[field]
    assert not Rule.objects.filter(name="OST nearly full").exists()


def test_an_operator_saves_a_rule_and_it_is_listed(client, world):
    response = signed_in(client, "operator").post("/alerts/rules/new/", VALID)
    assert response.status_code == 302
    rule = Rule.objects.get(name="OST nearly full")
    assert rule.extra_addresses == "ops@example.org\nstorage@example.org"
    assert rule.created_by.username == "operator"
    page = client.get("/alerts/rules/").content.decode()
    assert "OST nearly full" in page and "ost.kbytes_avail % of kbytes_total &lt; 10.0" in page


def test_a_backtest_saves_nothing(client, world, settings, services):
    settings.INFLUXDB_DATABASE = "alerts_console_backtest"
    response = signed_in(client, "operator").post(
        "/alerts/rules/new/", {**VALID, "save": "", "backtest": "1", "days": "7"}
    )
    assert response.status_code == 200
    assert response.context["backtest"].days == 7
    assert not Rule.objects.filter(name="OST nearly full").exists()


def test_a_viewer_reads_but_cannot_write_rules_acknowledge_or_silence(client, world):
    rule = red_rule()
    event = Event.objects.create(
        rule=rule, severity="critical", fingerprint="server:1", object_label="oss01"
    )
    viewer = signed_in(client, "viewer")
    assert viewer.get("/alerts/rules/").status_code == 200
    assert viewer.get(f"/alerts/rules/{rule.pk}/").status_code == 200
    assert viewer.post("/alerts/rules/new/", VALID).status_code == 403
    assert viewer.post(f"/alerts/rules/{rule.pk}/delete/").status_code == 403
    assert viewer.post(f"/alerts/events/{event.pk}/acknowledge/").status_code == 403
    assert viewer.post("/alerts/silences/", {"reason": "x"}).status_code == 403
    assert Rule.objects.filter(pk=rule.pk).exists()


def test_acknowledge_from_the_console(client, world):
    rule = red_rule()
    event = Event.objects.create(
        rule=rule, severity="critical", fingerprint="server:1", object_label="oss01"
    )
    response = signed_in(client, "operator").post(
        f"/alerts/events/{event.pk}/acknowledge/", {"comment": "on it", "next": "https://evil/"}
    )
    assert response.status_code == 302 and response["Location"] == "/alerts/"
    event.refresh_from_db()
    assert event.acknowledged_by.username == "operator"
    assert event.timing_state["acknowledged"] is True
    assert Transition.objects.get(event=event).detail == "by operator: on it"
    again = client.post(f"/alerts/events/{event.pk}/acknowledge/", {"comment": ""}, follow=True)
    assert "already acknowledged by operator" in again.content.decode()


def test_a_silence_from_the_console_names_its_object_and_refuses_a_bad_end(client, world):
    HealthStatus.objects.create(
        key="ssu:1", kind="ssu", name="ssu01", status="green", since=timezone.now()
    )
    operator = signed_in(client, "operator")
    bad = operator.post(
        "/alerts/silences/",
        {
            "object_key": "ssu:1",
            "starts": "2026-11-23T10:00",
            "ends": "2026-11-23T09:00",
            "reason": "x",
        },
    )
    assert "the end must come after the start" in errors(bad)["ends"]
    assert not Silence.objects.exists()
    good = operator.post(
        "/alerts/silences/", {"object_key": "ssu:1", "hours": "2", "reason": "drive swap"}
    )
    assert good.status_code == 302
    silence = Silence.objects.get()
    assert silence.object_label == "SSU ssu01" and silence.created_by.username == "operator"
    assert timedelta(hours=1.9) < silence.ends - silence.starts < timedelta(hours=2.1)
    operator.post(f"/alerts/silences/{silence.pk}/end/")
    silence.refresh_from_db()
    assert silence.ends <= timezone.now()


def test_the_api_writes_rules_for_operators_with_the_form_s_reasons(client, world):
    body = {
        "name": "Hot inlet",
        "condition": "threshold",
        "measurement": "bmc",
        "field": "value",
        "comparison": ">",
        "threshold": 40,
        "for_seconds": -1,
        "recipients": ["operator"],
    }
    signed_in(client, "operator")
    no_address = client.post("/api/v1/alert-rules/", body, content_type="application/json")
    assert no_address.json()["recipients"] == [
        "user operator cannot receive alert mail: no e-mail address, or not active"
    ]
    world["operator"].email = "operator@example.org"
    world["operator"].save()
    signed_in(client, "viewer")
    assert (
        client.post("/api/v1/alert-rules/", body, content_type="application/json").status_code
        == 403
    )
    signed_in(client, "operator")
    refused = client.post("/api/v1/alert-rules/", body, content_type="application/json")
    assert refused.status_code == 400
    assert "cannot be negative" in refused.json()["for_seconds"][0]
    created = client.post(
        "/api/v1/alert-rules/", {**body, "for_seconds": 60}, content_type="application/json"
    )
    assert created.status_code == 201, created.json()
    rule = Rule.objects.get(name="Hot inlet")
    assert [u.username for u in rule.recipients.all()] == ["operator"]
    assert rule.severity == "warning"  # the model's default
    listed = client.get("/api/v1/alert-rules/").json()
    assert "Hot inlet" in [r["name"] for r in listed["results"]]


def test_the_api_lists_and_acknowledges_events(client, world):
    rule = red_rule()
    event = Event.objects.create(
        rule=rule, severity="critical", fingerprint="server:1", object_label="oss01"
    )
    Event.objects.create(
        rule=rule,
        severity="critical",
        fingerprint="server:2",
        object_label="oss02",
        status=EventStatus.PENDING,
    )
    signed_in(client, "viewer")
    listed = client.get("/api/v1/alert-events/?status=firing").json()
    assert [e["object_label"] for e in listed["results"]] == ["oss01"]  # pending is not shown
    assert client.post(f"/api/v1/alert-events/{event.pk}/acknowledge/").status_code == 403
    signed_in(client, "operator")
    acked = client.post(
        f"/api/v1/alert-events/{event.pk}/acknowledge/",
        {"comment": "looking"},
        content_type="application/json",
    )
    assert acked.status_code == 200 and acked.json()["acknowledged_by"] == "operator"
    twice = client.post(f"/api/v1/alert-events/{event.pk}/acknowledge/")
    assert twice.status_code == 409


def test_the_command_lists_firing_events_as_json_lines(world, capsys):
    rule = red_rule()
    Event.objects.create(
        rule=rule,
        severity="critical",
        fingerprint="server:1",
        object_label="oss01",
        summary="powered off",
    )
    call_command("alerts_events", "--json")
    (line,) = capsys.readouterr().out.splitlines()
    row = json.loads(line)
    assert row["object"] == "oss01" and row["rule"] == "Anything red"
    assert row["status"] == "firing" and row["summary"] == "powered off"


def test_the_history_filters_by_object_rule_severity_and_time(client, world):
    red = red_rule()
    warm = Rule.objects.create(name="Warm", condition="health", health_state="hot")
    now = timezone.now()
    for label, rule, severity, hours in [
        ("oss01", red, "critical", 1),
        ("oss02", warm, "warning", 30),
        ("scratch-OST0003", red, "critical", 2),
    ]:
        Event.objects.create(
            rule=rule,
            severity=severity,
            fingerprint=label,
            object_label=label,
            status=EventStatus.RESOLVED,
            opened=now - timedelta(hours=hours),
        )
    viewer = signed_in(client, "viewer")

    def shown(**query) -> list[str]:
        page = viewer.get("/alerts/history/", query).context["page"]
        return [event.object_label for event in page]

    assert shown() == ["oss01", "scratch-OST0003", "oss02"]
    assert shown(object="oss") == ["oss01", "oss02"]
    assert shown(rule=warm.pk) == ["oss02"]
    assert shown(severity="critical") == ["oss01", "scratch-OST0003"]
    since = (now - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M")
    assert shown(since=since) == ["oss01", "scratch-OST0003"]


def test_an_event_page_shows_its_transitions_and_mail(client, world):
    event = Event.objects.create(
        rule=red_rule(), severity="critical", fingerprint="server:1", object_label="oss01"
    )
    transition = Transition.objects.create(event=event, kind="firing", detail="With it:\n- x")
    transition.deliveries.create(address="ops@example.org", status="silenced")
    page = signed_in(client, "viewer").get(f"/alerts/events/{event.pk}/").content.decode()
    assert "ops@example.org" in page and "Silenced" in page and "With it:" in page
    assert "Acknowledge" not in page  # a viewer does not acknowledge


def test_the_panel_shows_the_most_severe_and_newest_and_counts_the_rest(client, world):
    """A rack with more alerts firing than the panel shows: critical first, then the newest;
    the header counts them all and the panel says how many more the console lists."""
    rule = red_rule()
    now = timezone.now()
    for n in range(30):
        Event.objects.create(
            rule=rule,
            severity="critical" if n < 2 else "warning",  # the two oldest are critical
            fingerprint=f"ost:{n}",
            object_label=f"scratch-OST{n:04x}",
            opened=now - timedelta(minutes=60 - n),
        )
    Event.objects.create(
        rule=rule, severity="critical", fingerprint="ost:99", object_label="gone", status="resolved"
    )
    html = signed_in(client, "viewer").get("/alerts/panel/").content.decode()
    shown = [f"scratch-OST{n:04x}" for n in range(30) if f"scratch-OST{n:04x}<" in html]
    assert shown == [f"scratch-OST{n:04x}" for n in (0, 1, *range(7, 30))]
    order = [html.index(f"scratch-OST{n:04x}<") for n in (1, 0, 29, 28, 7)]
    assert order == sorted(order)  # critical newest first, then the warnings newest first
    assert 'Active alerts <span class="help">(30)</span>' in html
    assert "The 25 most severe and newest are shown; 5 more fire:" in html
    assert 'href="/alerts/">all in the alert console' in html and "gone" not in html


def test_an_object_s_panel_shows_only_its_own_alerts_with_the_same_cap(client, world, monkeypatch):
    """The panel of an SSU page (``?key=ssu:1``): the alerts of the SSU and what is in it, in
    the same order, capped and counted the same way."""
    rule = red_rule()
    now = timezone.now()
    HealthStatus.objects.create(key="ssu:1", kind="ssu", name="ssu01", status="red", since=now)
    for n in range(6):
        inside = n % 2 == 0  # targets 0, 2 and 4 are in ssu01
        HealthStatus.objects.create(
            key=f"target:{n}",
            kind="target",
            name=f"scratch-OST{n:04x}",
            status="red",
            parent_key="ssu:1" if inside else "",
            since=now,
        )
        Event.objects.create(
            rule=rule,
            severity="critical" if n == 0 else "warning",
            fingerprint=f"target:{n}",
            object_key=f"target:{n}",
            object_label=f"scratch-OST{n:04x}",
            opened=now - timedelta(minutes=10 - n),
        )
    viewer = signed_in(client, "viewer")
    html = viewer.get("/alerts/panel/", {"key": "ssu:1"}).content.decode()
    order = [html.index(f"scratch-OST{n:04x}<") for n in (0, 4, 2)]
    assert order == sorted(order) and "scratch-OST0001" not in html
    assert 'Active alerts <span class="help">(3)</span>' in html and "more fire" not in html
    monkeypatch.setattr("portal.alerts.views.PANEL_EVENTS", 2)
    html = viewer.get("/alerts/panel/", {"key": "ssu:1"}).content.decode()
    assert "scratch-OST0000<" in html and "scratch-OST0004<" in html
    assert "scratch-OST0002<" not in html
    assert "The 2 most severe and newest are shown; 1 more fires:" in html
