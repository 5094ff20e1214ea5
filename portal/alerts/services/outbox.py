"""The outbox of alert mail.

Deliveries are sent oldest first. An address whose earlier mail is still waiting gets nothing
newer until that one is through, so "resolved" never overtakes "firing"; a mail that failed for
good (refused, or one that cannot be written) holds nothing up. A delivery is claimed
by a conditional update before the send and marked sent right after it: a duplicate task or a
second worker skips it; a worker killed in between leaves it "sending", and it is put back in
the queue once ``STALE_CLAIM_SECONDS`` have passed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from portal.alerts import mail
from portal.alerts.choices import DeliveryStatus
from portal.alerts.models import Delivery

log = logging.getLogger(__name__)

# Longer than any one SMTP attempt can take (connection, TLS, DATA), with a wide margin.
STALE_CLAIM_SECONDS = 300
FIRST_RETRY_SECONDS = 30
LAST_RETRY_SECONDS = 900


@dataclass
class OutboxRound:
    sent: list[int] = field(default_factory=list)
    postponed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)  # for good: refused, or not writable


def retry_delay(attempts: int) -> timedelta:
    """30 s after the first temporary failure, doubling up to 15 minutes; a mail is not given
    up while its failures are temporary."""
    seconds = min(FIRST_RETRY_SECONDS * 2 ** max(attempts - 1, 0), LAST_RETRY_SECONDS)
    return timedelta(seconds=seconds)


def requeue_stale_claims(now: datetime) -> int:
    return Delivery.objects.filter(
        status=DeliveryStatus.SENDING,
        claimed_at__lt=now - timedelta(seconds=STALE_CLAIM_SECONDS),
    ).update(status=DeliveryStatus.PENDING, claimed_at=None)


def deliver_due(now: datetime | None = None) -> OutboxRound:
    """Send every delivery that is due, oldest first, one address at a time in order."""
    now = now or timezone.now()
    requeue_stale_claims(now)
    result = OutboxRound()
    blocked: set[str] = set()
    waiting = Delivery.objects.filter(
        status__in=[DeliveryStatus.PENDING, DeliveryStatus.SENDING]
    ).order_by("pk")
    for delivery in waiting.select_related("transition__event__rule"):
        if delivery.address in blocked:
            continue
        if delivery.status == DeliveryStatus.SENDING or delivery.next_attempt > now:
            blocked.add(delivery.address)  # an older mail to this address comes first
            continue
        outcome = send_one(delivery, now)
        if outcome not in (DeliveryStatus.SENT, DeliveryStatus.FAILED):
            blocked.add(delivery.address)  # it waits for its retry; so does what follows it
        {
            DeliveryStatus.SENT: result.sent,
            DeliveryStatus.PENDING: result.postponed,
            DeliveryStatus.FAILED: result.failed,
        }.get(outcome, []).append(delivery.pk)
    return result


def send_one(delivery: Delivery, now: datetime) -> str | None:
    """Claim, send and record one delivery; return its new status (None: someone else has it).

    Whatever goes wrong ends the attempt with the delivery recorded: back in the queue for a
    temporary failure, failed for good with its reason otherwise, never left "sending"."""
    claimed = Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.SENDING, claimed_at=now, attempts=F("attempts") + 1
    )
    if claimed != 1:
        return None
    attempts = delivery.attempts + 1
    try:
        subject, text, html = _written(delivery)
        mail.send(
            to=delivery.address,
            subject=subject,
            text=text,
            html=html,
            message_id=delivery.message_id,
        )
    except mail.MailError as error:
        status = DeliveryStatus.FAILED if error.permanent else DeliveryStatus.PENDING
        Delivery.objects.filter(pk=delivery.pk).update(
            status=status,
            claimed_at=None,
            last_error=str(error),
            next_attempt=timezone.now() + retry_delay(attempts),
        )
        log.warning("alert mail %s to %s: %s", delivery.pk, delivery.address, error)
        return status
    Delivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.SENT, sent_at=timezone.now(), last_error=""
    )
    return DeliveryStatus.SENT


def _written(delivery: Delivery) -> tuple[str, str, str]:
    """``render``, its failure (a template error, stored text it cannot use) a permanent one."""
    try:
        return render(delivery)
    except Exception as error:
        log.exception("alert mail %s could not be written", delivery.pk)
        raise mail.MailError(
            f"the mail could not be written: {mail.reason(error)}", permanent=True
        ) from None


def render(delivery: Delivery) -> tuple[str, str, str]:
    """Subject (severity, object, state), plain text and HTML of one alert mail."""
    transition = delivery.transition
    event = transition.event
    context = {
        "event": event,
        "rule": event.rule,
        "transition": transition,
        "object_link": settings.OSTARA_PORTAL_URL.rstrip("/") + event.object_url
        if event.object_url
        else "",
        "portal_url": settings.OSTARA_PORTAL_URL,
        "event_link": settings.OSTARA_PORTAL_URL.rstrip("/")
        + reverse("alerts:event", args=[event.pk]),
    }
    subject = (
        f"[Ostara {event.get_severity_display().upper()}] {transition.get_kind_display()}: "
        f"{event.object_label} - {event.rule.name}"
    )
    text = render_to_string("alerts/mail/transition.txt", context)
    html = render_to_string("alerts/mail/transition.html", context)
    return subject, text, html
