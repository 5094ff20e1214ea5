"""One round of alert evaluation, run right after each health evaluation (DESIGN.md §8).

Every enabled rule asks its condition of every object in its scope (``observe_rule``): the
colours the health engine just stored, or the newest metrics in InfluxDB. Each answer advances
the timing of that rule and object in ``portal.alerts.engine``; the state lives on the event
row (pending until the rule's ``for`` has passed, then firing, then resolved). A firing,
reminder or resolution is a ``Transition``; in the same transaction it gets one ``Delivery``
per recipient (the outbox), unless a silence covers the object or the mail is folded into the
mail about a down server (``portal.alerts.routing``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from portal import influxdb as influx
from portal.alerts import conditions, engine, routing
from portal.alerts.choices import (
    ConditionKind,
    DeliveryStatus,
    EventStatus,
    Severity,
    TransitionKind,
)
from portal.alerts.models import Delivery, Event, Rule, Silence, Transition, split_addresses
from portal.alerts.services.observation import HealthIndex, Readings, object_url, observe_rule
from portal.health.choices import NodeKind
from portal.health.models import StatusChange
from portal.inventory.models import Target

log = logging.getLogger(__name__)


@dataclass
class RoundResult:
    rules: int = 0
    observations: int = 0
    transitions: list[Transition] = field(default_factory=list)
    deliveries: int = 0
    changes: int = 0  # the changes of colour this round read, marked processed
    seconds: float = 0.0


# --- one round --------------------------------------------------------------------------------


def timing(rule: Rule) -> engine.Timing:
    return engine.Timing(rule.for_seconds, rule.clear_seconds, rule.repeat_seconds)


def evaluate_round(now: datetime | None = None, health: HealthIndex | None = None) -> RoundResult:
    """Observe every enabled rule, advance its events, write transitions and their outbox.

    ``health``: the colours health handed over after its evaluation (``HealthIndex.of_trees``);
    without them, those it stored last are read."""
    started = time.perf_counter()
    moment = now or timezone.now()
    epoch = moment.timestamp()
    result = RoundResult()
    health = HealthIndex.load() if health is None else health
    # The changes of colour no round has read yet: this round's observations cover them.
    unread = list(
        StatusChange.objects.filter(processed=False, at__lte=moment).values_list("pk", flat=True)
    )
    rules = list(Rule.objects.filter(enabled=True).prefetch_related("recipients__preferences"))
    readings = Readings(rules)
    open_events = {
        (event.rule_id, event.fingerprint): event
        for event in Event.objects.filter(status__in=[EventStatus.PENDING, EventStatus.FIRING])
    }
    changed: dict[int, Event] = {}
    created: dict[int, Event] = {}  # by id(): unsaved models compare by identity anyway
    dropped: list[Event] = []
    happened: list[tuple[Event, str]] = []

    def step(rule: Rule, obs: conditions.Observation, kind: str) -> None:
        event = open_events.get((rule.pk, obs.fingerprint))
        if event is None and not obs.true:
            return
        state = engine.EventState.from_dict(event.timing_state if event else None)
        before = state.as_dict()
        notification = engine.observe(state, epoch, obs.true, timing(rule))
        if event is None:
            event = Event(
                rule=rule,
                severity=rule.severity,
                fingerprint=obs.fingerprint,
                object_label=obs.label,
                object_key=obs.object_key,
                object_url=object_url(kind, health.by_key[obs.object_key].name)
                if obs.object_key in health.by_key
                else "",
                status=EventStatus.PENDING,
                summary=obs.summary,
                opened=moment,
            )
            created[id(event)] = event
        if not state.firing and state.true_since is None and notification is None:
            if event.pk:
                dropped.append(event)  # pending, and false again before its time: forgotten
            else:
                del created[id(event)]
            return
        if obs.true and obs.summary and obs.summary != event.summary:
            event.summary = obs.summary
            changed[id(event)] = event
        if notification == engine.FIRING:
            event.status, event.opened = EventStatus.FIRING, moment
        elif notification == engine.RESOLVED:
            event.status, event.resolved = EventStatus.RESOLVED, moment
        if state.as_dict() != before or notification:
            event.timing_state = state.as_dict()
            changed[id(event)] = event
        if notification:
            happened.append((event, notification))

    for rule in rules:
        result.rules += 1
        seen: set[str] = set()
        try:
            observed = observe_rule(rule, health, epoch, readings)
        except influx.InfluxError as error:  # a rule that cannot be read now keeps its state
            log.warning("alert rule %s not evaluated: %s", rule.name, error)
            continue
        for obs, kind in observed:
            result.observations += 1
            seen.add(obs.fingerprint)
            step(rule, obs, kind)
        if rule.condition == ConditionKind.HEALTH:
            # An object gone from the health tree (removed from the inventory) holds nothing.
            for (rule_id, fingerprint), event in list(open_events.items()):
                if rule_id == rule.pk and fingerprint not in seen:
                    gone = conditions.Observation(
                        fingerprint, event.object_label, False, object_key=event.object_key
                    )
                    step(rule, gone, "")

    with transaction.atomic():
        Event.objects.bulk_create(created.values())
        Event.objects.bulk_update(
            [event for key, event in changed.items() if key not in created],
            ["status", "opened", "resolved", "summary", "timing_state"],
            batch_size=500,
        )
        Event.objects.filter(pk__in=[event.pk for event in dropped]).delete()
        close_events_of_disabled_rules(moment)
        transitions = [
            Transition(event=event, kind=kind, at=moment, detail="") for event, kind in happened
        ]
        Transition.objects.bulk_create(transitions)
        result.deliveries = write_outbox(transitions, health, moment)
        for start in range(0, len(unread), 500):  # a long outage of alerting leaves many
            batch = unread[start : start + 500]
            StatusChange.objects.filter(pk__in=batch).update(processed=True)
    result.changes = len(unread)
    result.transitions = transitions
    result.seconds = time.perf_counter() - started
    return result


def close_events_of_disabled_rules(moment: datetime) -> int:
    """A disabled rule's open events end without mail: nobody asked to hear of them now."""
    stale = Event.objects.filter(
        status__in=[EventStatus.PENDING, EventStatus.FIRING], rule__enabled=False
    )
    Event.objects.filter(pk__in=stale.filter(status=EventStatus.PENDING).values("pk")).delete()
    closing = list(stale.filter(status=EventStatus.FIRING))
    for event in closing:
        event.status, event.resolved = EventStatus.RESOLVED, moment
        event.save(update_fields=["status", "resolved"])
        Transition.objects.create(
            event=event, kind=TransitionKind.RESOLVED, at=moment, detail="the rule was disabled"
        )
    return len(closing)


# --- who is told --------------------------------------------------------------------------------


def recipients(rule: Rule) -> list[str]:
    """The rule's users (those who opted out of warnings only for its critical alerts) and its
    other addresses, each once."""
    addresses: list[str] = []
    for user in rule.recipients.all():
        if not user.email or not user.is_active:
            continue
        preferences = getattr(user, "preferences", None)
        if rule.severity == Severity.WARNING and preferences and not preferences.alert_warnings:
            continue
        addresses.append(user.email.lower())
    addresses += [a.lower() for a in split_addresses(rule.extra_addresses)]
    return list(dict.fromkeys(addresses))


def active_windows(moment: datetime) -> list[routing.Window]:
    return [
        routing.Window(s.object_key, s.starts.timestamp(), s.ends.timestamp(), s.reason)
        for s in Silence.objects.filter(starts__lte=moment, ends__gt=moment)
    ]


def _down_servers(health: HealthIndex) -> set[str]:
    return {
        row.key for row in health.rows if row.kind == NodeKind.SERVER and row.summary.get("down")
    }


def _announced(down: set[str], moment: datetime) -> set[str]:
    """Down servers whose firing went out before this round."""
    return set(
        Event.objects.filter(
            object_key__in=down, status=EventStatus.FIRING, opened__lt=moment
        ).values_list("object_key", flat=True)
    )


def _carried_by() -> dict[str, str]:
    """Each target's key -> its primary server's key: who carried it before a fault."""
    return {
        f"target:{pk}": f"server:{server}"
        for pk, server in Target.objects.values_list("pk", "primary_server_id")
    }


def write_outbox(transitions: list[Transition], health: HealthIndex, moment: datetime) -> int:
    """One delivery per mailed transition and recipient; silenced and folded ones are kept as
    such, never sent."""
    mailed = [t for t in transitions if t.kind in engine.KINDS]
    if not mailed:
        return 0
    windows = active_windows(moment)
    down = _down_servers(health)
    announced = _announced(down, moment) if down else set()
    pending = sorted(
        ((t.event.object_key or t.event.fingerprint, t) for t in mailed),
        key=lambda item: item[1].event.severity != Severity.CRITICAL,
    )
    mails, inhibited = routing.fold(pending, _carried_by() if down else {}, down, announced)
    rows: list[Delivery] = []
    notes: dict[int, str] = {}

    def deliveries(transition: Transition, status: str = DeliveryStatus.PENDING) -> None:
        for address in recipients(transition.event.rule):
            rows.append(
                Delivery(transition=transition, address=address, status=status, next_attempt=moment)
            )

    for mail in mails:
        transition = mail.transition
        ancestry = health.ancestry(mail.key) or [mail.key]
        window = routing.silencing(windows, ancestry, moment.timestamp())
        if window is not None:
            notes[transition.pk] = f"silenced: {window.reason or 'maintenance window'}"
            deliveries(transition, DeliveryStatus.SILENCED)
        else:
            deliveries(transition)
        if mail.folded:
            lines = [notes[transition.pk]] if transition.pk in notes else []
            lines.append("With it:")
            lines += [f"- {_told(other)}" for other in mail.folded]
            notes[transition.pk] = "\n".join(lines)
        for other in mail.folded:
            notes[other.pk] = f"told in the mail about {transition.event.object_label}"
            deliveries(other, DeliveryStatus.FOLDED)
    for _key, transition, server in inhibited:
        label = health.by_key[server].name if server in health.by_key else server
        notes[transition.pk] = f"not mailed on its own: {label} is down, and its mail went out"
        deliveries(transition, DeliveryStatus.FOLDED)
    for transition in mailed:
        if transition.pk in notes:
            transition.detail = notes[transition.pk]
    Transition.objects.bulk_update([t for t in mailed if t.pk in notes], ["detail"])
    Delivery.objects.bulk_create(rows)
    return sum(1 for row in rows if row.status == DeliveryStatus.PENDING)


def _told(transition: Transition) -> str:
    event = transition.event
    return f"{event.object_label} ({event.rule.name}, {transition.kind}): {event.summary}"


# --- what people do to events -----------------------------------------------------------------


def acknowledge(event: Event, user, comment: str = "") -> None:
    """Stop the reminders of a firing event; say who and why."""
    if event.status != EventStatus.FIRING:
        raise ValueError("only a firing event can be acknowledged")
    if event.acknowledged_at:
        raise ValueError(f"already acknowledged by {event.acknowledged_by}")
    with transaction.atomic():
        locked = Event.objects.select_for_update().get(pk=event.pk)
        state = engine.EventState.from_dict(locked.timing_state)
        state.acknowledged = True
        locked.timing_state = state.as_dict()
        locked.acknowledged_by, locked.acknowledged_at = user, timezone.now()
        locked.acknowledge_comment = comment
        locked.save(
            update_fields=[
                "timing_state",
                "acknowledged_by",
                "acknowledged_at",
                "acknowledge_comment",
            ]
        )
        Transition.objects.create(
            event=locked,
            kind=TransitionKind.ACKNOWLEDGED,
            detail=f"by {user}" + (f": {comment}" if comment else ""),
        )
    event.refresh_from_db()


def active_events(under: str = ""):
    """Firing events, critical first, newest first; with ``under`` (a health key such as
    "ssu:3"), only those of that object and everything in it."""
    events = Event.objects.filter(status=EventStatus.FIRING).select_related(
        "rule", "acknowledged_by"
    )
    if under:
        health = HealthIndex.load()
        events = [e for e in events if under in (health.ancestry(e.object_key) or [e.object_key])]
    return sorted(events, key=lambda e: (e.severity != Severity.CRITICAL, -e.opened.timestamp()))


def retire(rule: Rule) -> str:
    """Delete a rule, or disable it when it has history (its open events close at the next
    round); say which."""
    if rule.events.exists():
        rule.enabled = False
        rule.save(update_fields=["enabled"])
        return "disabled: its history is kept"
    rule.delete()
    return "deleted"


def users_with_mail():
    """The users a rule can mail."""
    return get_user_model().objects.filter(is_active=True).exclude(email="").order_by("username")
