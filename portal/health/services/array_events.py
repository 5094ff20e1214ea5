"""The arrays' Major Event Log as the pages and the alert mail show it: the events about one
object (an array, a volume group, a drive, a controller, a target's volume group) since a
moment, newest first, read from the `array_event` points of the array collector
(``sensors.santricity``). One helper, ``events_about``, for every reader."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import Model

from metrics.influxql import arrays as queries
from portal import influxdb as influx
from portal.inventory.models import Drive, StorageArray, Target, VolumeGroup
from sensors import schema

# What a page shows: the events of the last day, the newest few.
PAGE_SECONDS = 24 * 3600
PAGE_LIMIT = 10
# What an alert mail adds: the events of the minutes before it, the newest few.
MAIL_SECONDS = 15 * 60
MAIL_LIMIT = 5
# An array's clock is its own (the events carry the controller's time): one a few minutes
# ahead of the appliance's must not hide its newest events.
CLOCK_SLACK_SECONDS = 300

_DRIVE_ID = re.compile(r"(\d+)\s*[,.]\s*(\d+)\s*[,.]\s*(\d+)")


@dataclass(frozen=True)
class ArrayEvent:
    at: datetime
    array: str
    component: str  # drive | volume_group | controller | array
    ident: str  # "tray,drawer,slot", the group's name, "A"/"B", or ""
    priority: str  # critical | informational
    event_type: str
    description: str
    sequence: int

    @property
    def critical(self) -> bool:
        return self.priority == "critical"

    @property
    def names(self) -> str:
        """The object it names, in words."""
        if self.component == "drive":
            drive = drive_address(self.ident)
            where = f"tray {drive[0]}, drawer {drive[1]}, slot {drive[2]}" if drive else self.ident
            return f"drive {where}"
        if self.component == "volume_group":
            return f"volume group {self.ident}"
        if self.component == "controller":
            return f"controller {self.ident}"
        return f"array {self.array}"


def drive_address(ident: str) -> tuple[int, int, int] | None:
    """(tray, drawer, slot) of a drive id as the arrays report it ("0,2,5")."""
    match = _DRIVE_ID.fullmatch(ident.strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


@dataclass(frozen=True)
class Subject:
    """What events are about an object: its array, and the parts of it that count."""

    array: str
    label: str  # the object in words, for the mail
    everything: bool = False  # the array itself: every event of it
    whole_array: bool = False  # events about the array as a whole (a mail about a part)
    volume_groups: frozenset[str] = frozenset()
    drives: frozenset[tuple[int, int, int]] = field(default_factory=frozenset)
    controllers: frozenset[str] = frozenset()

    def names(self, event: ArrayEvent) -> bool:
        if event.array != self.array:
            return False
        if self.everything:
            return True
        if event.component == "volume_group":
            return event.ident in self.volume_groups
        if event.component == "drive":
            return drive_address(event.ident) in self.drives
        if event.component == "controller":
            return event.ident in self.controllers
        return self.whole_array


def _drives_of(group: VolumeGroup) -> frozenset[tuple[int, int, int]]:
    return frozenset(
        (d.enclosure.position, d.drawer, d.slot) for d in group.drives.select_related("enclosure")
    )


def subject_of(row: Model, *, whole_array: bool = False) -> Subject | None:
    """The events that count for an inventory object: an array's, all of them; a volume
    group's (or a target's, through its group): the group's and its drives'; a drive's; with
    ``whole_array`` also those about the array as a whole."""
    if isinstance(row, StorageArray):
        return Subject(row.name, f"array {row.name}", everything=True)
    if isinstance(row, Target):
        row = row.volume_group
    if isinstance(row, VolumeGroup):
        return Subject(
            row.array.name,
            f"volume group {row.name}",
            whole_array=whole_array,
            volume_groups=frozenset({row.name}),
            drives=_drives_of(row),
        )
    if isinstance(row, Drive):
        enclosure = row.enclosure
        return Subject(
            enclosure.array.name,
            f"drive {enclosure.position},{row.drawer},{row.slot}",
            whole_array=whole_array,
            drives=frozenset({(enclosure.position, row.drawer, row.slot)}),
        )
    return None


def controller_subject(array: str, controller: str) -> Subject:
    return Subject(array, f"controller {controller}", controllers=frozenset({controller}))


_KEYED = {
    "storagearray": StorageArray,
    "target": Target,
    "volumegroup": VolumeGroup,
    "drive": Drive,
}


def subject_of_key(key: str, *, whole_array: bool = True) -> Subject | None:
    """The subject of a health object's key ("target:12", "storagearray:3"); None for objects
    no array event names (servers, pairs, filesystems) or that are gone."""
    model_name, _, pk = key.partition(":")
    model = _KEYED.get(model_name)
    if model is None or not pk.isdigit():
        return None
    row = model.objects.filter(pk=int(pk)).first()
    return subject_of(row, whole_array=whole_array) if row is not None else None


def events_about(
    subjects: list[Subject], since: float, until: float | None = None, limit: int = PAGE_LIMIT
) -> list[ArrayEvent]:
    """The events about any of ``subjects`` from ``since`` to ``until`` (now), newest first,
    at most ``limit``; the arrays' clocks may run ``CLOCK_SLACK_SECONDS`` ahead. Raises
    ``influx.InfluxError`` when InfluxDB does not answer."""
    if not subjects:
        return []
    until = (time.time() if until is None else until) + CLOCK_SLACK_SECONDS
    arrays = sorted({s.array for s in subjects})
    (rows,) = influx.query_tagged([queries.array_events_statement(arrays, since, until)], epoch="s")
    found: dict[tuple[str, int], ArrayEvent] = {}
    for row in rows:
        event = ArrayEvent(
            at=datetime.fromtimestamp(row["time"], UTC),
            array=row.get(schema.ARRAY) or "",
            component=row.get(schema.COMPONENT) or "array",
            ident=row.get(schema.ID) or "",
            priority=row.get(schema.PRIORITY) or "",
            event_type=row.get(schema.EVENT_TYPE) or "",
            description=row.get("description") or "",
            sequence=int(row.get("sequence") or 0),
        )
        if any(subject.names(event) for subject in subjects):
            # one event once, whichever server's collector wrote it
            found.setdefault((event.array, event.sequence or row["time"]), event)
    events = sorted(found.values(), key=lambda e: (e.at, e.sequence), reverse=True)
    return events[:limit]


def recent_events(subject: Subject | None, now: float | None = None) -> list[ArrayEvent] | None:
    """A page's "Recent array events": the last day's, newest first; None when InfluxDB does
    not answer (the page says the events cannot be read)."""
    if subject is None:
        return []
    now = time.time() if now is None else now
    try:
        return events_about([subject], now - PAGE_SECONDS, now)
    except influx.InfluxError:
        return None
