"""Who gets which alert mail, in plain Python: silences (maintenance windows) and inhibition.

Objects are named by stable keys (``kind:name``, e.g. ``server:oss03``) with their ancestry,
the object first and the filesystem last, as the health tree nests them. A silence on an object
covers everything below it for its time range: the event is still recorded, its mail is not
sent. Inhibition: when a server is down, the mail about what it carried (its targets, its
sensor) is folded into the server's mail instead of one mail each (Alertmanager's inhibition,
kept as detail rather than dropped).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Window:
    """A silence: an object key, a time range (epoch seconds), and why."""

    key: str
    starts: float
    ends: float
    reason: str = ""

    def covers(self, ancestry: Iterable[str], at: float) -> bool:
        return self.starts <= at < self.ends and self.key in ancestry


def silencing(windows: Iterable[Window], ancestry: list[str], at: float) -> Window | None:
    """The first window that silences an object with this ancestry at this time, if any."""
    return next((window for window in windows if window.covers(ancestry, at)), None)


@dataclass
class Mail:
    """One mail to send: the transition it is about, and the ones folded into it."""

    key: str
    transition: object
    folded: list[object] = field(default_factory=list)


def fold(
    pending: list[tuple[str, object]], carried_by: dict[str, str], down: set[str]
) -> tuple[list[Mail], list[tuple[str, object, str]]]:
    """Fold the mail of objects carried by a down server into that server's mail.

    ``pending`` is (object key, transition) in order, one per object; ``carried_by`` maps an
    object key to the server that carried it (a target to its server before the fault, a
    sensor to its host); ``down`` holds the servers whose server alert is firing or changes
    this round. Returns the mails in order and the inhibited transitions (object key,
    transition, server): carried objects of a down server whose own mail went out earlier.
    """
    leaders = {key: Mail(key, transition) for key, transition in pending if key in down}
    mails: list[Mail] = []
    inhibited: list[tuple[str, object, str]] = []
    for key, transition in pending:
        if key in leaders:
            mails.append(leaders[key])
            continue
        server = carried_by.get(key)
        if server in leaders:
            leaders[server].folded.append(transition)
        elif server in down:
            inhibited.append((key, transition, server))
        else:
            mails.append(Mail(key, transition))
    return mails, inhibited
