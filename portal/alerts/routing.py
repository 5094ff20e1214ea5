"""Silences (maintenance windows), in plain Python.

Objects are named by stable keys (``kind:name``, e.g. ``server:oss03``) with their ancestry,
the object first and the filesystem last, as the health tree nests them. A silence on an object
covers everything below it for its time range: the event is still recorded, and in its incident
group it is muted (listed, never mailed for itself; ``portal.alerts.grouping``). Inhibition by
cause is the group layer's too (``services.incident_rounds.inhibition``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


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
