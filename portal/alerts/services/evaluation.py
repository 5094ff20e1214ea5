"""One round of alert evaluation, run right after each health evaluation (DESIGN.md §8).

Every enabled rule asks its condition of every object in its scope (``observe_rule``): the
colours the health engine just stored, or the newest metrics in InfluxDB. Each answer advances
the timing of that rule and object in ``portal.alerts.engine``; the state lives on the event
row (pending until the rule's ``for`` has passed, then firing, then resolved). A firing,
reminder or resolution is a ``Transition`` (the event's history).

Then, in the same transaction, the incident groups (``services.incident_rounds``): firing
events join the group of their cause's place, and each group's mail that is due goes to the
outbox, one ``Delivery`` per recipient.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Case, When
from django.utils import timezone

from portal import influxdb as influx
from portal.alerts import conditions, engine
from portal.alerts.choices import (
    ConditionKind,
    EventStatus,
    Severity,
    TransitionKind,
)
from portal.alerts.models import (
    Event,
    GroupMail,
    Rule,
    Transition,
)
from portal.alerts.services.incident_rounds import advance_groups, write_outbox
from portal.alerts.services.observation import HealthIndex, Readings, object_url, observe_rule
from portal.health.models import StatusChange

log = logging.getLogger(__name__)


@dataclass
class RoundResult:
    rules: int = 0
    observations: int = 0
    transitions: list[Transition] = field(default_factory=list)
    mails: list[GroupMail] = field(default_factory=list)  # the incident groups' mails
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
        if obs.held:  # a job moves or builds the object: what it does is not an alarm
            return
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
        closed = close_events_of_disabled_rules(moment)
        transitions = [
            Transition(event=event, kind=kind, at=moment, detail="") for event, kind in happened
        ]
        Transition.objects.bulk_create(transitions)
        closing = [(event, engine.RESOLVED) for event in closed]
        grouped = advance_groups(happened + closing, health, moment)
        result.mails = grouped.mails
        result.deliveries = write_outbox(grouped, moment)
        for transition in transitions:  # the event page says why it was not mailed itself
            if transition.event.pk in grouped.muted:
                transition.detail = grouped.muted[transition.event.pk]
        Transition.objects.bulk_update(
            [t for t in transitions if t.event.pk in grouped.muted], ["detail"]
        )
        for start in range(0, len(unread), 500):  # a long outage of alerting leaves many
            batch = unread[start : start + 500]
            StatusChange.objects.filter(pk__in=batch).update(processed=True)
    result.changes = len(unread)
    result.transitions = transitions
    result.seconds = time.perf_counter() - started
    return result


def close_events_of_disabled_rules(moment: datetime) -> list[Event]:
    """A disabled rule's open events end (their groups' resolution tells of them); return the
    firing ones it closed."""
    stale = Event.objects.filter(
        status__in=[EventStatus.PENDING, EventStatus.FIRING], rule__enabled=False
    )
    Event.objects.filter(pk__in=stale.filter(status=EventStatus.PENDING).values("pk")).delete()
    closing = list(stale.filter(status=EventStatus.FIRING).select_related("rule"))
    for event in closing:
        event.status, event.resolved = EventStatus.RESOLVED, moment
        event.save(update_fields=["status", "resolved"])
        Transition.objects.create(
            event=event, kind=TransitionKind.RESOLVED, at=moment, detail="the rule was disabled"
        )
    return closing


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
    return first_events(under)[0]


def first_events(under: str = "", limit: int | None = None) -> tuple[list[Event], int]:
    """The first ``limit`` (None: all) of the firing events in active_events' order, and how
    many fire. The rows past the limit are counted, never loaded."""
    firing = Event.objects.filter(status=EventStatus.FIRING)
    loaded = firing.select_related("rule", "acknowledged_by")
    if not under:
        ordered = loaded.order_by(
            Case(When(severity=Severity.CRITICAL, then=0), default=1), "-opened", "-pk"
        )
        if limit is None:
            events = list(ordered)
            return events, len(events)
        return list(ordered[:limit]), firing.count()
    # Under an object: which events are its is the health tree's to say, so they are chosen
    # here from their keys alone, and only the chosen ones loaded.
    health = HealthIndex.load()
    rows = [
        (severity != Severity.CRITICAL, -opened.timestamp(), -pk)
        for pk, key, severity, opened in firing.values_list(
            "pk", "object_key", "severity", "opened"
        )
        if under in (health.ancestry(key) or [key])
    ]
    rows.sort()
    chosen = [-row[2] for row in (rows if limit is None else rows[:limit])]
    by_pk = loaded.in_bulk(chosen)
    return [by_pk[pk] for pk in chosen if pk in by_pk], len(rows)


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
