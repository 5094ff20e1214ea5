"""The incident groups of the alert round: who is told, and one mail per incident.

An event that fires joins the incident group of its cause's place (``place``: the SSU or
server pair, the array, the filesystem, per its rule's ``group_by``). Each open group advances
every round (``portal.alerts.grouping``); its firing, update, reminder or resolution is a
``GroupMail`` with one ``Delivery`` per recipient of its members' rules (the outbox). A member
whose cause is in its group (``inhibition``) or that a silence covers is muted: listed in the
group's mail with the reason, never mailed for itself. ``services.evaluation`` runs it in the
round's transaction.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings

from portal.alerts import conditions, engine, grouping, routing
from portal.alerts.choices import (
    DeliveryStatus,
    EventStatus,
    GroupBy,
    GroupStatus,
    Severity,
    TransitionKind,
)
from portal.alerts.models import (
    Delivery,
    Event,
    GroupMail,
    IncidentGroup,
    Rule,
    Silence,
    split_addresses,
)
from portal.alerts.services.observation import HealthIndex
from portal.health.choices import NodeKind
from portal.inventory.choices import VolumeGroupState
from portal.inventory.models import Target

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


# --- incident groups: one mail per incident -----------------------------------------------------

OPEN_GROUPS = (GroupStatus.PENDING, GroupStatus.FIRING)


def group_timing() -> grouping.GroupTiming:
    return grouping.GroupTiming(
        settings.OSTARA_ALERT_GROUP_WAIT, settings.OSTARA_ALERT_GROUP_INTERVAL
    )


@dataclass(frozen=True)
class TargetPlaces:
    """Where the inventory puts each target: the server that carries it by design, its array."""

    primary_server: dict[str, str]  # "target:3" -> "server:1"
    array: dict[str, str]  # "target:3" -> "storagearray:2"

    @classmethod
    def load(cls) -> TargetPlaces:
        rows = list(Target.objects.values_list("pk", "primary_server_id", "volume_group__array_id"))
        return cls(
            {f"target:{pk}": f"server:{server}" for pk, server, _ in rows if server},
            {f"target:{pk}": f"storagearray:{array}" for pk, _, array in rows if array},
        )


def place(group_by: str, object_key: str, health: HealthIndex, targets: TargetPlaces) -> str:
    """The health key of the place an object's alerts are grouped by (the rule's ``group_by``);
    "" when it has none (an object outside the health tree, or ``object``)."""
    if group_by == GroupBy.OBJECT:
        return ""
    ancestry = health.ancestry(object_key)
    kinds = {key: health.by_key[key].kind for key in ancestry}
    filesystem = next((key for key in ancestry if kinds[key] == NodeKind.FILESYSTEM), "")
    if group_by == GroupBy.FILESYSTEM:
        return filesystem
    if group_by == GroupBy.ARRAY:
        if kinds.get(object_key) == NodeKind.ARRAY:
            return object_key
        if targets.array.get(object_key) in health.by_key:
            return targets.array[object_key]
    # The SSU (or the MDS pair, its own unit) rather than the server pair inside an SSU.
    units = [key for key in ancestry if kinds[key] in (NodeKind.SSU, NodeKind.PAIR)]
    if units:
        return units[-1]
    return "" if group_by == GroupBy.PAIR else filesystem


def incident_key(event: Event, health: HealthIndex, targets: TargetPlaces) -> tuple[str, str]:
    """The key and label of the incident group an event belongs to."""
    key = place(event.rule.group_by, event.object_key, health, targets)
    if key:
        return key, health.by_key[key].name
    return f"object:{event.object_key or event.fingerprint}"[:250], event.object_label


def inhibition(
    event: Event,
    firing: list[Event],
    health: HealthIndex,
    targets: TargetPlaces,
) -> str:
    """Why a firing target's alert is muted by a known cause in its group, or "": its server
    is down or failed over (and that server's alert fires in the group), or is healthy and
    ready for failback (its "on partner"), its array lost a part (and the array's alert fires;
    never a critical alert), or its volume group failed (and its volume-group alert fires)."""
    row = health.by_key.get(event.object_key)
    if row is None or row.kind != NodeKind.TARGET:
        return ""
    server = health.by_key.get(targets.primary_server.get(event.object_key, ""))
    if server is not None and any(other.object_key == server.key for other in firing):
        if server.summary.get("down"):
            return f"muted: {server.name} is down"
        if server.summary.get("failed_over") or server.summary.get("ready_for_failback"):
            return f"muted: {server.name} has failed over, its targets run on its partner"
    if (
        server is not None
        and server.summary.get("ready_for_failback")
        and event.rule.health_state == conditions.ON_PARTNER
    ):
        # Healthy, its targets waiting on the partner: the operator's failback to decide (a
        # planned failover, or a repaired server), shown orange, not news by mail.
        return f"muted: {server.name} is ready for failback"
    array = health.by_key.get(targets.array.get(event.object_key, ""))
    # A lost part (a drawer, a controller) whose alert fires explains its volume groups' lost
    # redundancy, not an OST lost or red: a critical alert stays news.
    explained_by_array = (
        array is not None
        and array.summary.get("failed_parts")
        and any(other.object_key == array.key for other in firing)
    )
    if explained_by_array and event.severity != Severity.CRITICAL:
        return f"muted: {array.name} has failed parts: {', '.join(array.summary['failed_parts'])}"
    if (
        row.summary.get(conditions.VOLUME_GROUP) == VolumeGroupState.FAILED
        and event.rule.health_state != conditions.VOLUME_GROUP
        and not explained_by_array  # its volume group's alert is muted itself then
        and any(
            other.object_key == event.object_key
            and other.rule.health_state == conditions.VOLUME_GROUP
            for other in firing
        )
    ):
        return "muted: its volume group has failed"
    return ""


@dataclass
class GroupRound:
    """What the group layer did in one round."""

    mails: list[GroupMail] = field(default_factory=list)
    rules: list[set[Rule]] = field(default_factory=list)  # each mail's members' rules
    muted: dict[int, str] = field(default_factory=dict)  # event pk -> why it is muted


# The deliveries of a mail that went out, or will: not silenced or folded into another.
MAILED_DELIVERIES = (
    DeliveryStatus.PENDING,
    DeliveryStatus.SENDING,
    DeliveryStatus.SENT,
    DeliveryStatus.FAILED,
)


def advance_groups(
    happened: list[tuple[Event, str]], health: HealthIndex, moment: datetime
) -> GroupRound:
    """Put this round's firing events in their incident groups, advance every open group
    (``portal.alerts.grouping``) and write the mails that are due."""
    epoch = moment.timestamp()
    # Locked till the round commits: two rounds at once (a slow one and the next) advance a
    # group one after the other, so its mail is written once (PostgreSQL; SQLite writes one
    # transaction at a time anyway).
    open_groups = IncidentGroup.objects.select_for_update().filter(status__in=OPEN_GROUPS)
    groups = {group.key: group for group in open_groups}
    states = {key: grouping.GroupState.from_dict(group.state) for key, group in groups.items()}
    by_pk = {group.pk: group for group in groups.values()}
    notes: dict[str, list[grouping.MemberNote]] = defaultdict(list)
    linked: list[Event] = []
    fired_now = {event.pk for event, kind in happened if kind == engine.FIRING}
    legacy = list(
        Event.objects.filter(status=EventStatus.FIRING, group__isnull=True)
        .exclude(pk__in=fired_now)
        .select_related("rule")
    )
    places = TargetPlaces.load()

    def group_of(event: Event) -> IncidentGroup:
        if event.group_id in by_pk:
            return by_pk[event.group_id]
        key, label = incident_key(event, health, places)
        if key not in groups:
            group = IncidentGroup.objects.create(
                key=key, label=label[:100], severity=event.severity, opened=moment
            )
            groups[key], states[key], by_pk[group.pk] = group, grouping.GroupState(), group
        event.group = groups[key]
        linked.append(event)
        return groups[key]

    def adopt(event: Event) -> None:
        """An event that fired before grouping: told if its firing was mailed on its own (not
        silenced or folded into a server's mail), so its resolution is mailed as one too."""
        group = group_of(event)
        state = states[group.key]
        if str(event.pk) not in state.members:
            told = Delivery.objects.filter(
                transition__event=event,
                transition__kind=TransitionKind.FIRING,
                status__in=MAILED_DELIVERIES,
            ).exists()
            state.members[str(event.pk)] = grouping.Member(
                since=event.opened.timestamp(), repeat_seconds=event.rule.repeat_seconds, told=told
            )
            if told:
                state.mailed = True
                state.last_mailed = state.last_mailed or epoch

    for event in legacy:
        adopt(event)
    for event, kind in happened:
        if kind == engine.FIRING:
            group = group_of(event)
        elif kind == engine.RESOLVED:
            if event.group_id is None:  # resolved in the round that found it ungrouped
                adopt(event)
            group = by_pk.get(event.group_id)
        else:
            continue  # reminders: the group repeats, not each member
        if group is not None:
            notes[group.key].append(
                grouping.MemberNote(str(event.pk), kind, event.rule.repeat_seconds)
            )
    Event.objects.bulk_update(linked, ["group"])

    members: dict[int, list[Event]] = defaultdict(list)
    for event in Event.objects.filter(group__in=list(by_pk)).select_related("rule"):
        members[event.group_id].append(event)
    windows = active_windows(moment)
    timing = group_timing()
    # Alerts about to fire within a group interval (their rule's "for" runs): a group of their
    # place waits for them; one with a long "for" (an hour's threshold) is not waited for.
    expected = {
        incident_key(event, health, places)[0]
        for event in Event.objects.filter(status=EventStatus.PENDING).select_related("rule")
        if (event.timing_state.get("true_since") or epoch) + event.rule.for_seconds
        <= epoch + timing.group_interval
    }
    done = GroupRound()
    for key, group in groups.items():
        state = states[key]
        events = {str(event.pk): event for event in members[group.pk]}
        firing = [event for event in events.values() if event.status == EventStatus.FIRING]
        muted = {}
        # An object whose alert the group has told already: its other alerts of no higher
        # severity add no news (a server fenced after its red alert: its sensor falls silent).
        told: dict[str, Event] = {}
        for pk, member in state.members.items():
            if member.told and member.firing and not member.muted and pk in events:
                other = events[pk]
                if other.object_key and (
                    other.object_key not in told or other.severity == Severity.CRITICAL
                ):
                    told[other.object_key] = other
        for event in firing:
            reason = inhibition(event, firing, health, places)
            known = state.members.get(str(event.pk))
            before = told.get(event.object_key)
            if (
                not reason
                and before is not None
                and not (known and known.told)
                and (before.severity == Severity.CRITICAL or event.severity == Severity.WARNING)
            ):
                reason = f"muted: told already by its alert '{before.rule.name}'"
            window = routing.silencing(
                windows, health.ancestry(event.object_key) or [event.object_key], epoch
            )
            if not reason and window is not None:
                reason = f"silenced: {window.reason or 'maintenance window'}"
            if reason:
                muted[str(event.pk)] = reason
                done.muted[event.pk] = reason
        state.acknowledged = bool(group.acknowledged_at) or (
            bool(firing) and all(event.acknowledged_at for event in firing)
        )
        note = grouping.advance(
            state, epoch, notes.get(key, ()), muted, timing, expecting=key in expected
        )
        group.state = state.as_dict()
        if events:  # the worst of what fires now; of everything, once all resolved
            worst = min(firing or events.values(), key=lambda e: e.severity != Severity.CRITICAL)
            group.severity = worst.severity
        if state.over:
            group.status, group.resolved = GroupStatus.RESOLVED, moment
        elif state.mailed:
            group.status = GroupStatus.FIRING
        if note is not None:
            rows = member_rows(state, events, note)
            done.mails.append(GroupMail(group=group, kind=note.kind, at=moment, members=rows))
            done.rules.append({event.rule for event in events.values()})
    IncidentGroup.objects.bulk_update(
        list(groups.values()), ["state", "severity", "status", "resolved"]
    )
    GroupMail.objects.bulk_create(done.mails)
    return done


def member_rows(
    state: grouping.GroupState, events: dict[str, Event], note: grouping.GroupNotification
) -> list[dict]:
    """The members as the mail tells of them: the causes first (not muted, critical first,
    earliest first), the muted after them."""
    rows = []
    for key, member in state.members.items():
        event = events.get(key)
        if event is None:
            continue
        duration = member.duration()
        rows.append(
            {
                "event": event.pk,
                "object": event.object_label,
                "object_url": event.object_url,
                "rule": event.rule.name,
                "severity": event.severity,
                "since": _iso(member.since),
                "summary": event.summary,
                # a resolved member: why it was muted, so the resolution says it
                "muted": member.muted if member.firing else member.explained,
                "state": EventStatus.FIRING if member.firing else EventStatus.RESOLVED,
                "new": key in note.new,
                "resolved": _iso(member.resolved) if member.resolved is not None else None,
                "duration": duration,
            }
        )
    rows.sort(key=lambda row: (bool(row["muted"]), row["severity"] != Severity.CRITICAL))
    return rows


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def write_outbox(done: GroupRound, moment: datetime) -> int:
    """One delivery per group mail and recipient of any of its members' rules."""
    rows = []
    for mail, rules in zip(done.mails, done.rules, strict=True):
        addresses: list[str] = []
        for rule in sorted(rules, key=lambda rule: rule.pk):
            addresses += recipients(rule)
        for address in dict.fromkeys(addresses):
            rows.append(Delivery(group_mail=mail, address=address, next_attempt=moment))
    Delivery.objects.bulk_create(rows)
    return len(rows)
