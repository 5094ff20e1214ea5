"""When an alert fires, reminds and resolves: the timing of one event, in plain Python.

One event belongs to one rule and one object (its fingerprint). Observations of the rule's
condition arrive in time order; ``observe`` says which notification, if any, an observation
causes. The same code serves the live evaluation (its state is kept on the event row between
rounds), the backtest in the rule form and ``python -m portal.alerts.replay``.

- It *fires* at the first observation at which the condition has been true continuously for at
  least ``for_seconds``, measured from the first true observation of the run (Alertmanager's
  ``for``; ClusterStor's "three bad readings in a row" is ``for`` of two intervals).
- While firing, a *reminder* goes out each time ``repeat_seconds`` have passed since the last
  firing or reminder (0: never). An acknowledged event sends no reminders.
- It *resolves* at the first observation at which the condition has been false continuously for
  at least ``clear_seconds``; a true observation before that keeps it firing with no new mail, so
  a flapping condition is one event, not one per flap.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

FIRING = "firing"
REMINDER = "reminder"
RESOLVED = "resolved"
KINDS = (FIRING, REMINDER, RESOLVED)


@dataclass(frozen=True)
class Timing:
    """A rule's durations, in seconds."""

    for_seconds: float = 0.0
    clear_seconds: float = 0.0
    repeat_seconds: float = 0.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 0:
                raise ValueError(f"{name} must not be negative (got {value})")


@dataclass
class EventState:
    """What one fingerprint remembers between observations (all times in epoch seconds)."""

    true_since: float | None = None  # start of the current run of true observations
    false_since: float | None = None  # start of the current run of false ones, while firing
    firing: bool = False
    last_notified: float | None = None  # the last firing or reminder
    acknowledged: bool = False

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> EventState:
        return cls(**(data or {}))


def observe(state: EventState, t: float, true: bool, timing: Timing) -> str | None:
    """Advance ``state`` by one observation at time ``t``; return the notification it causes
    (one of ``KINDS``) or None."""
    if true:
        state.false_since = None
        if state.true_since is None:
            state.true_since = t
        if not state.firing:
            if t - state.true_since >= timing.for_seconds:
                state.firing = True
                state.acknowledged = False
                state.last_notified = t
                return FIRING
            return None
        return _reminder(state, t, timing)

    state.true_since = None
    if not state.firing:
        return None
    if state.false_since is None:
        state.false_since = t
    if t - state.false_since >= timing.clear_seconds:
        state.firing = False
        state.false_since = None
        state.last_notified = None
        state.acknowledged = False
        return RESOLVED
    # Still firing while the clear duration runs: reminders continue until it resolves.
    return _reminder(state, t, timing)


def _reminder(state: EventState, t: float, timing: Timing) -> str | None:
    if timing.repeat_seconds <= 0 or state.acknowledged or state.last_notified is None:
        return None
    if t - state.last_notified >= timing.repeat_seconds:
        state.last_notified = t
        return REMINDER
    return None


@dataclass(frozen=True)
class Notification:
    t: float
    object: str
    kind: str


def replay(observations: list[tuple[float, str, bool]], timing: Timing) -> list[Notification]:
    """Run observations ``(t, object, true)`` in time order through one state per object."""
    states: dict[str, EventState] = {}
    notifications = []
    for t, name, true in observations:
        kind = observe(states.setdefault(name, EventState()), t, true, timing)
        if kind:
            notifications.append(Notification(t, name, kind))
    return notifications
