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
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from portal import influxdb as influx
from portal.alerts import mail
from portal.alerts.choices import DeliveryStatus, GroupMailKind, Severity
from portal.alerts.models import Delivery, Event, GroupMail
from portal.health.services import array_events, kernel_lines

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
    for delivery in waiting.select_related("transition__event__rule", "group_mail__group"):
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
    """Subject, plain text and HTML of one alert mail: an incident group's, or (written before
    grouping) one transition's."""
    if delivery.group_mail_id:
        return render_group_mail(delivery.group_mail)
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
        **_array_events([event.object_key], transition.at),
        **_kernel_lines([event.object_key], transition.at),
    }
    subject = (
        f"[Ostara {event.get_severity_display().upper()}] {transition.get_kind_display()}: "
        f"{event.object_label} - {event.rule.name}"
    )
    text = render_to_string("alerts/mail/transition.txt", context)
    html = render_to_string("alerts/mail/transition.html", context)
    return subject, text, html


def _array_events(object_keys: list[str], at: datetime) -> dict:
    """The arrays' recent events about the mail's objects (a target: its volume group and its
    drives; an array: all its parts) or their arrays, in the minutes before the mail: the newest
    few. A mail never waits for InfluxDB: when it does not answer, the mail says so."""
    subjects = [
        subject
        for subject in (array_events.subject_of_key(key) for key in dict.fromkeys(object_keys))
        if subject is not None
    ]
    minutes = array_events.MAIL_SECONDS // 60
    if not subjects:
        return {"array_events": [], "array_events_minutes": minutes}
    until = at.timestamp()
    try:
        found = array_events.events_about(
            subjects, until - array_events.MAIL_SECONDS, until, limit=array_events.MAIL_LIMIT
        )
    except influx.InfluxError:
        found = None
    return {"array_events": found, "array_events_minutes": minutes}


def _kernel_lines(object_keys: list[str], at: datetime) -> dict:
    """The kernel lines about the mail's objects (a target: the lines that name it; a server
    or a pair: its servers') in the minutes before the mail, the newest few; None when InfluxDB
    does not answer (the mail says so and goes)."""
    return {
        "kernel_lines": kernel_lines.mail_lines(object_keys, at.timestamp()),
        "kernel_lines_minutes": kernel_lines.MAIL_SECONDS // 60,
    }


# --- an incident group's mail ------------------------------------------------------------------

TEXT_COLUMNS = (("object", "Object", 24), ("rule", "Rule", 32), ("since", "Since", 19))


def render_group_mail(group_mail: GroupMail) -> tuple[str, str, str]:
    """``[Ostara <SEVERITY>] <group>: <n> alerts – <first cause>``, and the members in a table
    (object, rule, since, value; how long each lasted once resolved), in text and HTML."""
    group = group_mail.group
    portal = settings.OSTARA_PORTAL_URL.rstrip("/")
    members = [_member(row, portal) for row in group_mail.members]
    resolved = group_mail.kind == GroupMailKind.RESOLVED
    new = sum(1 for member in members if member["new"])
    keys = list(
        Event.objects.filter(pk__in=[m["event"] for m in members if m.get("event")])
        .order_by("pk")
        .values_list("object_key", flat=True)
    )
    context = {
        "group": group,
        "group_mail": group_mail,
        "members": members,
        "resolved": resolved,
        "headline": _headline(group_mail, len(members), new),
        "count": f"{len(members)} alert{'s' if len(members) != 1 else ''}",
        "table": _text_table(members, resolved),
        # each object's page once, however many of its alerts the mail lists
        "links": dict((m["object"], m["link"]) for m in members if m["link"]),
        "muted": sum(1 for member in members if member["muted"]),
        "incident_link": portal + incident_path(group_mail),
        "portal_url": settings.OSTARA_PORTAL_URL,
        **_array_events(keys, group_mail.at),
        **_kernel_lines(keys, group_mail.at),
    }
    subject = (
        f"[Ostara {Severity(group.severity).label.upper()}] {group.label}: "
        f"{context['headline']} – {_first_cause(members, group.label)}"
    )
    text = render_to_string("alerts/mail/incident.txt", context)
    html = render_to_string("alerts/mail/incident.html", context)
    return subject, text, html


def incident_path(group_mail: GroupMail) -> str:
    """The incident's page; the event page of its first member where the portal has none."""
    try:
        return reverse("alerts:incident", args=[group_mail.group_id])
    except NoReverseMatch:
        first = next((row["event"] for row in group_mail.members), None)
        return reverse("alerts:event", args=[first]) if first else reverse("alerts:active")


def _headline(group_mail: GroupMail, count: int, new: int) -> str:
    alerts = f"{count} alert{'s' if count != 1 else ''}"
    return {
        GroupMailKind.FIRING: alerts,
        GroupMailKind.UPDATE: f"{alerts}, {new} new",
        GroupMailKind.REMINDER: f"{alerts}, still firing",
        GroupMailKind.RESOLVED: f"{alerts} resolved",
    }[group_mail.kind]


def _first_cause(members: list[dict], label: str) -> str:
    """The first member the mail is about (not muted), in a few words: the object (unless the
    group is named after it) and its first reason."""
    first = next((m for m in members if not m["muted"]), members[0] if members else None)
    if first is None:
        return "no alerts"
    reason = (first["summary"] or first["rule"]).split("; ")[0]
    if len(reason) > 80:
        reason = reason[:79].rstrip() + "…"
    if first["object"] == label or first["object"] in reason:
        return reason
    return f"{first['object']}: {reason}"


def _member(row: dict, portal: str) -> dict:
    """A member of the snapshot as the templates show it."""
    since = parse_datetime(row["since"]) if row.get("since") else None
    duration = row.get("duration")
    value = row.get("summary") or ""
    return {
        **row,
        "since": timezone.localtime(since) if since else None,
        "since_text": f"{timezone.localtime(since):%Y-%m-%d %H:%M:%S}" if since else "",
        "value": f"{row['muted']} ({value})"
        if row.get("muted") and value
        else row.get("muted") or value,
        "lasted": _duration(duration) if duration is not None else "",
        "link": portal + row["object_url"] if row.get("object_url") else "",
        # The alert's own page: its history, its mails, its acknowledgement.
        "event_link": portal + reverse("alerts:event", args=[row["event"]])
        if row.get("event")
        else "",
    }


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {seconds} s"
    return f"{seconds} s"


def _text_table(members: list[dict], resolved: bool) -> str:
    """The members as fixed-width columns (object, rule, since[, lasted], value)."""
    columns = list(TEXT_COLUMNS) + ([("lasted", "Lasted", 12)] if resolved else [])
    head = "  ".join(title.ljust(width) for _, title, width in columns) + "  Value"
    lines = [head, "-" * len(head)]
    for member in members:
        cells = [
            _cut(member["since_text"] if name == "since" else member[name], width).ljust(width)
            for name, _, width in columns
        ]
        lines.append("  ".join(cells) + "  " + member["value"])
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
