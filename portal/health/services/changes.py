"""The latest changes of colour as people read them: identical changes of one evaluation
grouped ("24 targets of ssu02: grey → green, first evaluation"), newest first."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from portal.health.choices import NodeKind
from portal.health.models import HealthStatus, StatusChange

# How many recent change rows are read to fill the groups shown.
LOOK_BACK_ROWS = 2000


@dataclass
class ChangeGroup:
    at: datetime
    kind: str
    old: str
    new: str
    reasons: list[str]
    initial: bool
    names: list[str] = field(default_factory=list)
    parent: str = ""

    @property
    def kind_label(self) -> str:
        label = NodeKind(self.kind).label
        # "server pair", "storage array", but "SSU" stays an acronym (not "Ssu ssu01").
        label = label if label.isupper() else label.lower()
        return label if len(self.names) == 1 else f"{label}s"

    @property
    def back_to_normal(self) -> bool:
        """A real recovery: a colour that had a problem went back to green."""
        return not self.initial and not self.reasons


def grouped(changes: Iterable[StatusChange], limit: int) -> list[ChangeGroup]:
    groups: dict[tuple, ChangeGroup] = {}
    for change in changes:
        key = (
            change.at,
            change.kind,
            change.old,
            change.new,
            change.initial,
            tuple(change.reasons),
        )
        group = groups.get(key)
        if group is None:
            if len(groups) == limit:
                break
            group = groups[key] = ChangeGroup(
                change.at,
                change.kind,
                change.old,
                change.new,
                list(change.reasons),
                change.initial,
            )
        group.names.append(change.name)
    result = list(groups.values())
    _name_parents([g for g in result if len(g.names) > 1])
    for group in result:
        group.names.sort()
    return result


def _name_parents(groups: list[ChangeGroup]) -> None:
    """Where every object of a group sits under one parent, the group says so."""
    wanted = {(g.kind, name) for g in groups for name in g.names}
    if not wanted:
        return
    parents = {
        (row.kind, row.name): row.parent_name
        for row in HealthStatus.objects.filter(
            kind__in={kind for kind, _ in wanted}, name__in={name for _, name in wanted}
        ).only("kind", "name", "parent_name")
    }
    for group in groups:
        found = {parents.get((group.kind, name), "") for name in group.names}
        if len(found) == 1:
            group.parent = found.pop()


def latest(limit: int) -> list[ChangeGroup]:
    return grouped(StatusChange.objects.all()[:LOOK_BACK_ROWS], limit)
