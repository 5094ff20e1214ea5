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
    pending: list[tuple[str, object]],
    carried_by: dict[str, str],
    down: set[str],
    announced: set[str] = frozenset(),
) -> tuple[list[Mail], list[tuple[str, object, str]]]:
    """One mail per object and round, and one for a down server with all it carried.

    ``pending`` is (object key, transition) in order, most severe first; ``carried_by`` maps an
    object key to the server that carried it (a target to its server before the fault);
    ``down`` holds the servers that are down, ``announced`` those of them whose mail went out
    in an earlier round. An object's first transition of the round carries its mail, its
    others (a second rule about it) are folded into it; so are the transitions of whatever a
    down server carried. Returns the mails in order and the inhibited transitions (object key,
    transition, server): those of an announced server and of what it carried, recorded and
    not mailed.
    """
    leaders: dict[str, Mail] = {}
    for key, transition in pending:
        leaders.setdefault(key, Mail(key, transition))
    mails: list[Mail] = []
    inhibited: list[tuple[str, object, str]] = []
    for key, transition in pending:
        server = carried_by.get(key)
        if server in down and server in leaders and server not in announced:
            leaders[server].folded.append(transition)
        elif server in announced or key in announced:
            inhibited.append((key, transition, server if server in announced else key))
        elif leaders[key].transition is transition:
            mails.append(leaders[key])
        else:
            leaders[key].folded.append(transition)  # another rule about the same object
    return mails, inhibited
