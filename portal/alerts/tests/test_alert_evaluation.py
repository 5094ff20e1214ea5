"""Rounds of alert evaluation over health colours set by hand, against a real SMTP server on
loopback: what an administrator receives, and when."""

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
from portal.inventory.models import Server
from portal.inventory.services import save_plans
from portal.inventory.tests.conftest import load_spec

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


def kinds(smtp) -> list[str]:
    return [s.split("]")[1].split(":")[0].strip() for s in smtp.mailbox.subjects()]


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
    assert firing["Subject"] == "[Ostara WARNING] Firing: scratch-OST0000 - VG"
    text = firing.get_body(preferencelist=("plain",)).get_content()
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


def test_each_object_is_its_own_event(rack, smtp):
    rule()
    degrade()
    degrade("target:2", "scratch-OST0001")
    round_at(0)
    assert sorted(Event.objects.values_list("object_label", flat=True)) == [
        "scratch-OST0000",
        "scratch-OST0001",
    ]
    assert len(smtp.mailbox.messages) == 2


def test_red_mails_the_object_that_is_red_not_every_parent_that_repeats_it(rack, smtp):
    rule(name="Anything red", severity="critical", health_state="red")
    health("target:1", "target", "scratch-OST0000", "red", parent="ssu:1", reasons=["lost"])
    health("ssu:1", "ssu", "ssu01", "red", parent="filesystem:1", own_status="green")
    health("filesystem:1", "filesystem", "scratch", "red", own_status="green")
    round_at(0)
    assert [e.object_label for e in Event.objects.all()] == ["scratch-OST0000"]


def test_a_down_server_is_one_mail_with_the_targets_it_carried(rack, smtp):
    # Keys of real inventory rows: the targets' primary server is what they fold under.
    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
    server = Server.objects.get(hostname="oss01")
    targets = list(server.primary_targets.order_by("index")[:3])
    health(f"server:{server.pk}", "server", "oss01", "red", parent="pair:1", down=True)
    for target in targets:
        health(f"target:{target.pk}", "target", target.label, "orange", on_partner=True)
    rule(name="Anything red", severity="critical", health_state="red")
    rule(name="On partner", health_state="on_partner")
    round_at(0)
    assert kinds(smtp) == ["Firing"]
    (message,) = smtp.mailbox.messages
    assert "oss01" in message["Subject"]
    text = message.get_body(preferencelist=("plain",)).get_content()
    for target in targets:
        assert target.label in text
    folded = Delivery.objects.filter(status=DeliveryStatus.FOLDED).count()
    assert folded == len(targets)


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
    assert Event.objects.get().status == EventStatus.FIRING
    assert smtp.mailbox.messages == []
    assert Delivery.objects.get().status == DeliveryStatus.SILENCED


def test_a_user_who_opted_out_of_warnings_gets_only_critical_mail(rack, smtp, django_user_model):
    quiet = django_user_model.objects.create(username="quiet", email="quiet@example.org")
    Preferences.objects.create(user=quiet, alert_warnings=False)
    warning = rule(extra_addresses="")
    critical = rule(name="Red", severity="critical", health_state="red", extra_addresses="")
    warning.recipients.add(quiet)
    critical.recipients.add(quiet)
    degrade()
    health("target:2", "target", "scratch-OST0001", "red", parent="ssu:1")
    round_at(0)
    assert smtp.mailbox.subjects() == ["[Ostara CRITICAL] Firing: scratch-OST0001 - Red"]


def test_a_disabled_rule_ends_its_events_without_mail(rack, smtp):
    vg = rule()
    degrade()
    round_at(0)
    vg.enabled = False
    vg.save()
    round_at(10)
    assert Event.objects.get().status == EventStatus.RESOLVED
    assert kinds(smtp) == ["Firing"]


def test_the_default_rules_are_installed_and_mail_a_degraded_volume_group(db, smtp, settings):
    # What the data migration does on first start (an earlier transactional test may have
    # flushed the rows it wrote), once: an edited default is not installed again.
    Rule.objects.all().delete()
    settings.OSTARA_ALERT_MAIL_TO = "ops@example.org"
    first_start = import_module("portal.alerts.migrations.0002_default_rules")
    first_start.install(django_apps, None)
    Rule.objects.filter(builtin="anything-red").update(name="Red anywhere")
    first_start.install(django_apps, None)
    assert Rule.objects.count() == 6
    assert set(Rule.objects.values_list("builtin", flat=True)) == {
        "anything-red",
        "target-on-partner",
        "ost-full",
        "sensor-silent",
        "volume-group",
        "temperature",
    }
    health("filesystem:1", "filesystem", "scratch")
    health("ssu:1", "ssu", "ssu01", "orange", parent="filesystem:1", own_status="green")
    degrade()
    round_at(0)
    assert smtp.mailbox.subjects() == [
        "[Ostara WARNING] Firing: scratch-OST0000 - Volume group degraded, critical or failed"
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
