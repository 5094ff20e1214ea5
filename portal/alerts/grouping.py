"""When an incident group is mailed: the timing of one group of alerts, in plain Python.

An incident group holds the alerts (events, of ``portal.alerts.engine``) that share their
cause's place: an SSU, a server pair, an array, a filesystem. Alertmanager's grouping: the group,
not each alert, is mailed.

- Its *firing* mail waits ``group_wait`` after its first member fires, so the alerts one fault
  raises within that time go out together; it lists every member with its reason. While an
  alert of the same place is about to fire (it holds, its rule's ``for`` still runs: a target
  on its partner a minute after its server went down), the first mail waits for it too, up to
  ``group_interval`` after the first member fired.
- Members that join later go out together in one *update* after ``group_interval`` since the
  group's last mail.
- A *muted* member (inhibited: its cause is a member already, "oss02 is down"; or silenced) is
  listed with the reason but never causes a mail on its own, not even when its cause clears
  before it does.
- While it fires, a *reminder* goes out each time the shortest non-zero repeat of its firing
  members' rules has passed since its last mail; none once it is acknowledged.
- It *resolves* when every member has resolved: one mail, listing how long each lasted. A group
  that never mailed its firing mails no resolution either; it just ends.

The per-event timing (``for``, ``clear``) stays in the engine: its firing and resolved
notifications are this module's input (its reminders are not: the group repeats). The same code
serves the live evaluation (the state is kept on the group row between rounds) and
``python -m portal.alerts.replay --group-by-field``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field

from portal.alerts import engine

FIRING = "firing"
UPDATE = "update"
REMINDER = "reminder"
RESOLVED = "resolved"
KINDS = (FIRING, UPDATE, REMINDER, RESOLVED)

DEFAULT_GROUP_WAIT = 30.0
DEFAULT_GROUP_INTERVAL = 300.0


@dataclass(frozen=True)
class GroupTiming:
    """The group wait and interval, in seconds (global, not per rule)."""

    group_wait: float = DEFAULT_GROUP_WAIT
    group_interval: float = DEFAULT_GROUP_INTERVAL

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 0:
                raise ValueError(f"{name} must not be negative (got {value})")


@dataclass
class Member:
    """One alert of the group (all times in epoch seconds)."""

    since: float  # when it fired
    repeat_seconds: float = 0.0  # its rule's repeat
    firing: bool = True
    resolved: float | None = None
    muted: str = ""  # why it is muted now ("" = it is not)
    # It was muted once: its cause is known to the group, so when the cause clears first (its
    # own clear time is still running) it does not become news of its own.
    explained: str = ""  # the reason it was muted last ("" = never)
    told: bool = False  # listed in a mail of the group already

    def duration(self) -> float | None:
        return None if self.resolved is None else self.resolved - self.since


@dataclass
class GroupState:
    """What one group remembers between rounds."""

    members: dict[str, Member] = field(default_factory=dict)  # in the order they joined
    mailed: bool = False  # its firing mail went out
    last_mailed: float | None = None  # its last mail of any kind
    acknowledged: bool = False
    over: bool = False  # every member resolved: the group has ended

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> GroupState:
        data = dict(data or {})
        members = {key: Member(**value) for key, value in data.pop("members", {}).items()}
        return cls(members=members, **data)

    def firing(self) -> list[str]:
        return [key for key, member in self.members.items() if member.firing]

    def loud(self) -> list[str]:
        """Firing members that may cause a mail (not muted)."""
        return [key for key, member in self.members.items() if member.firing and not member.muted]

    def repeat_seconds(self) -> float:
        """The shortest repeat of the loud members: muted and silenced ones remind nobody."""
        repeats = [self.members[key].repeat_seconds for key in self.loud()]
        return min(filter(None, repeats), default=0.0)


@dataclass(frozen=True)
class MemberNote:
    """One member's notification of this round, from the engine."""

    member: str
    kind: str  # engine.FIRING, engine.REMINDER or engine.RESOLVED
    repeat_seconds: float = 0.0


@dataclass(frozen=True)
class GroupNotification:
    """A mail of the group: its kind, and the members told of for the first time in it."""

    t: float
    kind: str
    new: tuple[str, ...] = ()


def advance(
    state: GroupState,
    t: float,
    notes: Iterable[MemberNote],
    muted: Mapping[str, str],
    timing: GroupTiming,
    expecting: bool = False,
) -> GroupNotification | None:
    """Advance ``state`` by one round at time ``t``: apply the members' notifications, mark the
    firing members ``muted`` names (member -> reason) and unmute the others; return the group's
    mail, if one is due. ``expecting``: an alert of the group's place is pending (about to join)."""
    if state.over:
        return None
    for note in notes:
        if note.kind == engine.FIRING:
            state.members.pop(note.member, None)  # fires again: a new member, told anew
            state.members[note.member] = Member(since=t, repeat_seconds=note.repeat_seconds)
        elif note.kind == engine.RESOLVED and note.member in state.members:
            member = state.members[note.member]
            member.firing, member.resolved = False, t
    for key, member in state.members.items():
        if member.firing:
            member.muted = muted.get(key, "")
            member.explained = member.muted or member.explained
    if not state.members:
        return None

    if not state.mailed:
        loud = state.loud()
        if not state.firing():
            state.over = True  # over before anyone was told: no resolution without a firing
            return None
        if not loud or t - min(state.members[key].since for key in loud) < timing.group_wait:
            return None
        first = min(state.members[key].since for key in state.firing())
        if expecting and t - first < timing.group_interval:
            return None  # more of the same fault is on its way: one mail for all of it
        state.mailed = True
        return _mail(state, t, FIRING)

    if not state.firing():
        state.over = True
        return _mail(state, t, RESOLVED)
    since_mail = t - (state.last_mailed if state.last_mailed is not None else t)
    if any(
        not state.members[key].told and not state.members[key].explained for key in state.loud()
    ):
        if since_mail >= timing.group_interval:
            return _mail(state, t, UPDATE)
    repeat = state.repeat_seconds()
    if repeat and not state.acknowledged and since_mail >= repeat:
        return _mail(state, t, REMINDER)
    return None


def _mail(state: GroupState, t: float, kind: str) -> GroupNotification:
    new = tuple(key for key, member in state.members.items() if not member.told)
    for member in state.members.values():
        member.told = True
    state.last_mailed = t
    return GroupNotification(t, kind, new)


# --- replay -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Notification:
    """A group's mail in a replay, with the objects it announces: every member for a firing or
    a resolution, the new members for an update, the firing members for a reminder."""

    t: float
    group: str
    kind: str
    objects: tuple[str, ...]


def replay_groups(
    observations: list[tuple[float, str, bool, str]],
    timing: engine.Timing,
    group_timing: GroupTiming,
) -> list[Notification]:
    """Run observations ``(t, object, true, group)`` in time order through one engine state per
    object and one group state per group. Each distinct ``t`` is a round: its observations are
    taken, then every open group advances (so group waits and intervals end between the
    observations of a group)."""
    events: dict[str, engine.EventState] = {}
    groups: dict[str, GroupState] = {}
    group_of: dict[str, str] = {}  # an object's group while it fires
    notifications: list[Notification] = []
    rounds: dict[float, list[tuple[str, bool, str]]] = {}
    for t, name, true, group in observations:
        rounds.setdefault(t, []).append((name, true, group))
    for t, observed in rounds.items():
        notes: dict[str, list[MemberNote]] = {}
        for name, true, group in observed:
            kind = engine.observe(events.setdefault(name, engine.EventState()), t, true, timing)
            if kind == engine.FIRING:
                group_of[name] = group
            if kind in (engine.FIRING, engine.RESOLVED) and name in group_of:
                owner = group_of[name]
                if owner not in groups or groups[owner].over:
                    groups[owner] = GroupState()
                notes.setdefault(owner, []).append(MemberNote(name, kind, timing.repeat_seconds))
        for key, state in groups.items():
            if state.over:
                continue
            note = advance(state, t, notes.get(key, ()), {}, group_timing)
            if note is not None:
                notifications.append(Notification(t, key, note.kind, _announced(state, note)))
    return notifications


def _announced(state: GroupState, note: GroupNotification) -> tuple[str, ...]:
    if note.kind == UPDATE:
        return note.new
    if note.kind == REMINDER:
        return tuple(state.firing())
    return tuple(state.members)
