"""The outbox of alert mail against a real SMTP server on loopback: each transition's mail
arrives once, in order, after an outage too; a refusal is kept visible, never retried blindly."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from portal.alerts.choices import ConditionKind, DeliveryStatus, Severity, TransitionKind
from portal.alerts.models import Delivery, Event, Rule, Transition
from portal.alerts.services.outbox import STALE_CLAIM_SECONDS, deliver_due, retry_delay

pytestmark = pytest.mark.django_db


@pytest.fixture
def event():
    rule = Rule.objects.create(
        name="Volume group failed", severity=Severity.CRITICAL, condition=ConditionKind.HEALTH
    )
    return Event.objects.create(
        rule=rule,
        severity=rule.severity,
        fingerprint="target:scratch-OST0003",
        object_label="scratch-OST0003",
        object_url="/targets/scratch-OST0003/",
        summary="scratch-OST0003: volume group ssu01-a-vg03 failed (3 drives lost)",
    )


def mail(event, kind, *addresses):
    transition = Transition.objects.create(event=event, kind=kind)
    for address in addresses:
        Delivery.objects.create(transition=transition, address=address)
    return transition


def test_a_transition_is_mailed_once_with_severity_object_state_and_a_link(smtp, event):
    mail(event, TransitionKind.FIRING, "ops@example.org")
    assert len(deliver_due().sent) == 1
    assert deliver_due().sent == []  # nothing twice
    (message,) = smtp.mailbox.messages
    assert message["Subject"] == "[Ostara CRITICAL] Firing: scratch-OST0003 - Volume group failed"
    assert message["To"] == "ops@example.org"
    assert message["Message-ID"].startswith("<ostara-alert-")
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "volume group ssu01-a-vg03 failed" in text
    assert "http://127.0.0.1:8480/targets/scratch-OST0003/" in text
    html = message.get_body(preferencelist=("html",)).get_content()
    assert 'href="http://127.0.0.1:8480/targets/scratch-OST0003/"' in html
    assert Delivery.objects.get().status == DeliveryStatus.SENT


def test_mail_waits_out_an_smtp_outage_and_arrives_once_in_order(smtp, event):
    smtp.stop()
    mail(event, TransitionKind.FIRING, "ops@example.org")
    first = deliver_due()
    assert first.postponed and not first.sent
    delivery = Delivery.objects.get()
    assert delivery.status == DeliveryStatus.PENDING
    assert "could not be reached" in delivery.last_error
    mail(event, TransitionKind.RESOLVED, "ops@example.org")
    # the resolved mail is due now, but must not overtake the firing one
    assert deliver_due().sent == []
    smtp.start()
    assert deliver_due().sent == []  # the firing mail waits for its retry time
    later = timezone.now() + retry_delay(1) + timedelta(seconds=1)
    assert len(deliver_due(later).sent) == 2
    assert deliver_due(later + timedelta(hours=1)).sent == []
    assert [s.split("]")[1].split(":")[0].strip() for s in smtp.mailbox.subjects()] == [
        "Firing",
        "Resolved",
    ]


def test_a_refused_address_is_kept_failed_and_does_not_hold_up_others(smtp, event):
    smtp.mailbox.refuse["nobody@example.org"] = "550 5.1.1 no such user"
    mail(event, TransitionKind.FIRING, "nobody@example.org", "ops@example.org")
    result = deliver_due()
    assert len(result.sent) == 1 and len(result.failed) == 1
    refused = Delivery.objects.get(address="nobody@example.org")
    assert refused.status == DeliveryStatus.FAILED
    assert "550" in refused.last_error
    assert deliver_due(timezone.now() + timedelta(days=1)).sent == []
    assert [m["To"] for m in smtp.mailbox.messages] == ["ops@example.org"]


def test_a_claim_left_by_a_killed_worker_is_sent_once_after_it_goes_stale(smtp, event):
    mail(event, TransitionKind.FIRING, "ops@example.org")
    claimed_at = timezone.now()
    Delivery.objects.update(status=DeliveryStatus.SENDING, claimed_at=claimed_at, attempts=1)
    assert deliver_due().sent == []  # maybe still being sent by the other worker
    stale = claimed_at + timedelta(seconds=STALE_CLAIM_SECONDS + 1)
    assert len(deliver_due(stale).sent) == 1
    assert len(smtp.mailbox.messages) == 1


def test_retries_back_off_to_a_quarter_of_an_hour_and_never_stop():
    assert [retry_delay(n).total_seconds() for n in (1, 2, 3, 4, 5, 6, 20)] == [
        30,
        60,
        120,
        240,
        480,
        900,
        900,
    ]
