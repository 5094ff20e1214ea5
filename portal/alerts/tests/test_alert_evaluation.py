"""Rounds of alert evaluation over health colours set by hand, against a real SMTP server on
loopback: what an administrator receives, and when. The group wait is 0 here (each test that is
about it sets its own), so an alert's incident mail goes out in the round it fires."""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.utils import timezone

from portal.accounts.models import Preferences
from portal.alerts.choices import DeliveryStatus, EventStatus, TransitionKind
from portal.alerts.models import Delivery, Event, Rule, Silence
from portal.alerts.services.evaluation import acknowledge, evaluate_round
from portal.alerts.services.outbox import deliver_due
from portal.health.models import HealthStatus

pytestmark = pytest.mark.django_db

T0 = timezone.now().replace(microsecond=0)


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def health(key, kind, name, status="green", parent="", **summary) -> HealthStatus:
    row, _ = HealthStatus.objects.update_or_create(
        key=key,
        defaults={
            "kind": kind,
            "name": name,
            "status": status,
            "reasons": summary.pop("reasons", []),
            "summary": summary,
            "parent_key": parent,
            "since": T0,
        },
    )
    return row


@pytest.fixture(autouse=True)
def no_group_wait(settings):
    settings.OSTARA_ALERT_GROUP_WAIT = 0
    settings.OSTARA_ALERT_GROUP_INTERVAL = 300


@pytest.fixture
def rack(db):
    """A filesystem, one SSU with its pair, two servers, two targets; all green."""
    Rule.objects.all().delete()  # the defaults are tested on their own below
    health("filesystem:1", "filesystem", "scratch")
    health("ssu:1", "ssu", "ssu01", parent="filesystem:1")
    health("pair:1", "pair", "ssu01", parent="ssu:1")
    health("server:1", "server", "oss01", parent="pair:1")
    health("server:2", "server", "oss02", parent="pair:1")
    health("target:1", "target", "scratch-OST0000", parent="ssu:1")
    health("target:2", "target", "scratch-OST0001", parent="ssu:1")


def rule(name="VG", **fields) -> Rule:
    defaults = {
        "severity": "warning",
        "condition": "health",
        "health_state": "volume_group",
        "extra_addresses": "ops@example.org",
    }
    return Rule.objects.create(name=name, **{**defaults, **fields})


def degrade(key="target:1", name="scratch-OST0000"):
    health(
        key,
        "target",
        name,
        "orange",
        parent="ssu:1",
        volume_group="degraded",
        reasons=["volume group ssu01-a-vg00 is degraded: drive ssu01-a-e0 drawer 1 slot 3 failed"],
    )


def heal(key="target:1", name="scratch-OST0000"):
    health(key, "target", name, "green", parent="ssu:1")


def text_of(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def kinds(smtp) -> list[str]:
    """Each mail's kind, as its first line says it: "Firing: ssu01, 1 alert (warning)"."""
    return [text_of(message).split(":")[0] for message in smtp.mailbox.messages]


def round_at(seconds: float):
    result = evaluate_round(at(seconds))
    deliver_due(at(seconds))
    return result


def test_firing_reminder_acknowledge_and_resolved_each_mail_once(rack, smtp):
    rule(for_seconds=20, clear_seconds=20, repeat_seconds=100)
    degrade()
    round_at(0)
    round_at(10)
    assert smtp.mailbox.messages == []  # pending: not yet held for 20 s
    assert Event.objects.get().status == EventStatus.PENDING
    round_at(20)
    (firing,) = smtp.mailbox.messages
    assert smtp.mailbox.subjects()[0] == (
        "[Ostara WARNING] ssu01: 1 alert – scratch-OST0000: "
        "volume group ssu01-a-vg00 is degraded: drive ssu01-a-e0 drawer 1 slot 3 failed"
    )
    text = text_of(firing)
    assert "volume group ssu01-a-vg00 is degraded: drive ssu01-a-e0 drawer 1 slot 3" in text
    for t in range(30, 130, 10):
        round_at(t)
    assert kinds(smtp) == ["Firing", "Reminder"]  # at 120 s: 100 s after the firing
    event = Event.objects.get()
    acknowledge(event, get_user_model().objects.create(username="olga"), "replacing it")
    for t in range(130, 400, 10):
        round_at(t)
    assert kinds(smtp) == ["Firing", "Reminder"]  # acknowledged: no more reminders
    heal()
    round_at(400)
    round_at(410)
    assert kinds(smtp) == ["Firing", "Reminder"]  # false for 10 s of its 20
    round_at(420)
    assert kinds(smtp) == ["Firing", "Reminder", "Resolved"]
    event.refresh_from_db()
    assert event.status == EventStatus.RESOLVED and event.resolved == at(420)
    assert [t.kind for t in event.transitions.order_by("pk")] == [
        TransitionKind.FIRING,
        TransitionKind.REMINDER,
        TransitionKind.ACKNOWLEDGED,
        TransitionKind.RESOLVED,
    ]


def test_a_flapping_condition_is_one_event(rack, smtp):
    rule(clear_seconds=60)
    for i in range(20):
        (degrade if i % 2 == 0 else heal)()
        round_at(10 * i)
    assert Event.objects.count() == 1
    assert kinds(smtp) == ["Firing"]


def test_a_condition_false_before_its_duration_leaves_no_event(rack, smtp):
    rule(for_seconds=60)
    degrade()
    round_at(0)
    heal()
    round_at(10)
    assert Event.objects.count() == 0 and smtp.mailbox.messages == []


def test_each_object_is_its_own_event_and_one_ssu_is_one_mail(rack, smtp):
    rule()
    degrade()
    degrade("target:2", "scratch-OST0001")
    round_at(0)
    assert sorted(Event.objects.values_list("object_label", flat=True)) == [
        "scratch-OST0000",
        "scratch-OST0001",
    ]
    (message,) = smtp.mailbox.messages
    assert smtp.mailbox.subjects()[0].startswith("[Ostara WARNING] ssu01: 2 alerts – ")
    assert "scratch-OST0000" in text_of(message) and "scratch-OST0001" in text_of(message)


def test_a_rule_grouped_by_object_mails_each_object_on_its_own(rack, smtp):
    rule(group_by="object")
    degrade()
    degrade("target:2", "scratch-OST0001")
    round_at(0)
    assert sorted(smtp.mailbox.subjects()) == [
        f"[Ostara WARNING] {name}: 1 alert – volume group ssu01-a-vg00 is degraded: "
        "drive ssu01-a-e0 drawer 1 slot 3 failed"
        for name in ("scratch-OST0000", "scratch-OST0001")
    ]


def test_red_mails_the_object_that_is_red_not_every_parent_that_repeats_it(rack, smtp):
    rule(name="Anything red", severity="critical", health_state="red")
    health("target:1", "target", "scratch-OST0000", "red", parent="ssu:1", reasons=["lost"])
    health("ssu:1", "ssu", "ssu01", "red", parent="filesystem:1", own_status="green")
    health("filesystem:1", "filesystem", "scratch", "red", own_status="green")
    round_at(0)
    assert [e.object_label for e in Event.objects.all()] == ["scratch-OST0000"]


def test_a_silence_records_the_event_and_sends_nothing(rack, smtp, django_user_model):
    rule()
    author = django_user_model.objects.create(username="maint")
    Silence.objects.create(
        object_key="ssu:1",
        object_label="SSU ssu01",
        starts=at(-60),
        ends=at(600),
        reason="drive swap",
        created_by=author,
    )
    degrade()
    round_at(0)
    event = Event.objects.get()
    assert event.status == EventStatus.FIRING
    assert event.transitions.get().detail == "silenced: drive swap"
    round_at(700)  # the window is over: it is mailed now, listed as silenced no more
    heal()
    round_at(710)
    assert kinds(smtp) == ["Firing", "Resolved"]


def test_an_alert_silenced_until_it_resolves_sends_no_resolution(rack, smtp, django_user_model):
    rule()
    author = django_user_model.objects.create(username="maint")
    Silence.objects.create(
        object_key="ssu:1",
        object_label="SSU ssu01",
        starts=at(-60),
        ends=at(600),
        reason="drive swap",
        created_by=author,
    )
    degrade()
    round_at(0)
    heal()
    round_at(700)  # resolved after the window: its firing was never mailed, nor is this
    assert smtp.mailbox.messages == [] and Delivery.objects.count() == 0
    assert Event.objects.get().group.status == "resolved"


def test_a_user_who_opted_out_of_warnings_gets_only_critical_mail(rack, smtp, django_user_model):
    quiet = django_user_model.objects.create(username="quiet", email="quiet@example.org")
    Preferences.objects.create(user=quiet, alert_warnings=False)
    warning = rule(extra_addresses="", group_by="object")
    critical = rule(
        name="Red", severity="critical", health_state="red", extra_addresses="", group_by="object"
    )
    warning.recipients.add(quiet)
    critical.recipients.add(quiet)
    degrade()
    health("target:2", "target", "scratch-OST0001", "red", parent="ssu:1")
    round_at(0)
    assert smtp.mailbox.subjects() == ["[Ostara CRITICAL] scratch-OST0001: 1 alert – Red"]


def test_a_disabled_rule_ends_its_events_and_their_incident(rack, smtp):
    vg = rule()
    degrade()
    round_at(0)
    vg.enabled = False
    vg.save()
    round_at(10)
    assert Event.objects.get().status == EventStatus.RESOLVED
    assert kinds(smtp) == ["Firing", "Resolved"]  # the incident it alone made is over


def test_the_default_rules_are_installed_and_mail_a_degraded_volume_group(db, smtp, settings):
    # What the data migration does on first start (an earlier transactional test may have
    # flushed the rows it wrote), once: an edited default is not installed again.
    Rule.objects.all().delete()
    settings.OSTARA_ALERT_MAIL_TO = "ops@example.org"
    first_start = import_module("portal.alerts.migrations.0002_default_rules")
    first_start.install(django_apps, None)
    Rule.objects.filter(builtin="anything-red").update(name="Red anywhere")
    first_start.install(django_apps, None)
    assert Rule.objects.count() == 7
    assert set(Rule.objects.values_list("builtin", flat=True)) == {
        "anything-red",
        "target-on-partner",
        "ost-full",
        "sensor-silent",
        "volume-group",
        "temperature",
        "redundancy-lost",
    }
    health("filesystem:1", "filesystem", "scratch")
    health("ssu:1", "ssu", "ssu01", "orange", parent="filesystem:1", own_status="green")
    degrade()
    round_at(0)
    assert smtp.mailbox.subjects() == [
        "[Ostara WARNING] ssu01: 1 alert – scratch-OST0000: volume group ssu01-a-vg00 is "
        "degraded: drive ssu01-a-e0 drawer 1 slot 3 failed"
    ]


def test_mail_of_a_fault_that_came_and_went_during_an_smtp_outage_arrives_once_in_order(rack, smtp):
    rule()
    smtp.stop()
    degrade()
    round_at(0)
    heal()
    round_at(10)
    assert Delivery.objects.filter(status=DeliveryStatus.PENDING).count() == 2
    smtp.start()
    deliver_due(at(3600))
    deliver_due(at(7200))
    assert kinds(smtp) == ["Firing", "Resolved"]
