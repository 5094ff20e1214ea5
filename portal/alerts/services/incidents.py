"""Incident groups as the Alerts page and the API show them, and what people do to them.

An incident group (``IncidentGroup``) holds the events that share their cause's place; it is
mailed as one (``portal.alerts.grouping``). Acknowledging a group acknowledges each of its
firing members (their reminders stop) and the group (its reminders stop).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from portal.alerts.choices import DeliveryStatus, EventStatus, GroupStatus, Severity
from portal.alerts.models import Delivery, Event, GroupMail, IncidentGroup
from portal.alerts.services.evaluation import acknowledge
from portal.alerts.services.observation import HealthIndex

OPEN = (GroupStatus.PENDING, GroupStatus.FIRING)


def _with_members(groups: QuerySet) -> QuerySet:
    members = Event.objects.select_related("rule", "acknowledged_by").order_by("opened", "pk")
    return groups.select_related("acknowledged_by").prefetch_related(
        Prefetch("events", queryset=members)
    )


def active_incidents(under: str = "") -> list[IncidentGroup]:
    """Open groups (waiting or firing), critical first, newest first, each with its members
    (``group.events.all()``, prefetched). With ``under`` (a health key such as "ssu:3"), only
    groups with a member in that object or below it."""
    groups = list(_with_members(IncidentGroup.objects.filter(status__in=OPEN)))
    if under:
        health = HealthIndex.load()
        groups = [
            group
            for group in groups
            if any(
                under in (health.ancestry(event.object_key) or [event.object_key])
                for event in group.events.all()
            )
        ]
    return sorted(groups, key=lambda g: (g.severity != Severity.CRITICAL, -g.opened.timestamp()))


def recent_incidents(limit: int = 100) -> QuerySet:
    """Every group, newest first (the history), with its members."""
    return _with_members(IncidentGroup.objects.all())[:limit]


def incident(pk: int) -> IncidentGroup:
    """One group with its members and its mails (``group.mails.all()``, each with its
    deliveries); raises ``IncidentGroup.DoesNotExist``."""
    mails = GroupMail.objects.prefetch_related("deliveries").order_by("at", "pk")
    return (
        _with_members(IncidentGroup.objects.filter(pk=pk))
        .prefetch_related(Prefetch("mails", queryset=mails))
        .get()
    )


WAITING = (DeliveryStatus.PENDING, DeliveryStatus.SENDING)


def mail_state(group: IncidentGroup) -> str:
    """Where the group's latest mail is, in words: gone out only once every address has it;
    while the relay is down it waits in the outbox, and says how often it was tried."""
    latest = group.mails.order_by("-at", "-pk").first()
    if latest is None:
        if group.status == GroupStatus.PENDING:
            return "no mail yet: the first waits a little for the alerts the same fault raises"
        return "no mail (nobody receives its rules' mail)"
    deliveries = list(latest.deliveries.order_by("pk"))
    waiting = [delivery for delivery in deliveries if delivery.status in WAITING]
    failed = [delivery for delivery in deliveries if delivery.status == DeliveryStatus.FAILED]
    what = f"its {latest.get_kind_display().lower()} mail"
    if waiting:
        tries = max(delivery.attempts for delivery in waiting)
        tried = f", tried {tries} time{'s' if tries != 1 else ''}" if tries else ""
        error = next((d.last_error for d in waiting if d.last_error), "")
        return (
            f"{what} waits in the outbox for {_addresses(waiting)}{tried}"
            + (f" ({error})" if error else "")
            + "; it goes out when the mail relay takes it"
        )
    if failed:
        return f"{what} could not be delivered to {_addresses(failed)}: {failed[0].last_error}"
    sent = [delivery for delivery in deliveries if delivery.status == DeliveryStatus.SENT]
    if not sent:
        return f"{what} goes to nobody (silenced or told with its server)"
    last = max(delivery.sent_at for delivery in sent if delivery.sent_at)
    return f"{what} went out at {timezone.localtime(last):%H:%M:%S} to {_addresses(sent)}"


def _addresses(deliveries: list[Delivery]) -> str:
    return ", ".join(delivery.address for delivery in deliveries)


def acknowledge_group(group: IncidentGroup, user, comment: str = "") -> int:
    """Stop the reminders of an open group and of each of its firing members; say who and why.
    Returns how many members were acknowledged. Raises ``ValueError`` (the reason in words)
    when the group is over or acknowledged already."""
    if group.status not in OPEN:
        raise ValueError("only an open incident can be acknowledged")
    if group.acknowledged_at:
        raise ValueError(f"already acknowledged by {group.acknowledged_by}")
    with transaction.atomic():
        locked = IncidentGroup.objects.select_for_update().get(pk=group.pk)
        state = dict(locked.state or {})
        state["acknowledged"] = True
        locked.state = state
        locked.acknowledged_by, locked.acknowledged_at = user, timezone.now()
        locked.acknowledge_comment = comment
        locked.save(
            update_fields=["state", "acknowledged_by", "acknowledged_at", "acknowledge_comment"]
        )
        members = list(
            locked.events.filter(status=EventStatus.FIRING, acknowledged_at__isnull=True)
        )
        for event in members:
            acknowledge(event, user, comment)
    group.refresh_from_db()
    return len(members)
