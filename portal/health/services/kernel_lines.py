"""What the servers' kernels said, as the pages, the search and the alert mail show it: the
Lustre and LNet lines of the `kernel_log` points (``sensors.kmsg``) about an object, newest
first, and the storms the sensor counted rather than sent (`kernel_storm`). One helper,
``lines_about``, for every reader; ``subject_of`` says which lines count for an object (a
target: the lines that name it, on whichever server; a server or a pair: its servers' lines; a
filesystem: the lines that name one of its targets)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from django.db.models import Model

from metrics.influxql import kernel as queries
from metrics.influxql.kernel import LineFilter
from portal import influxdb as influx
from portal.inventory.choices import TargetKind
from portal.inventory.models import SSU, Filesystem, Server, ServerPair, Target
from sensors import schema

# What a page shows: the last day's lines, the newest few.
PAGE_SECONDS = 24 * 3600
PAGE_LIMIT = 10
# What an alert mail quotes: the lines of the minutes before it, the newest few.
MAIL_SECONDS = 15 * 60
MAIL_LIMIT = 8
# What the search gives at most in one page.
SEARCH_LIMIT = 200
# A server's clock may run a little ahead of the appliance's.
CLOCK_SLACK_SECONDS = 60
PROBLEM_SEVERITIES = ("emerg", "alert", "crit", "err")


@dataclass(frozen=True)
class KernelLine:
    at: datetime
    server: str
    subsystem: str  # lustre | lnet
    severity: str  # err, warning, ...
    message_number: str  # "11-0", or ""
    fs: str
    target: str  # "OST0003", or ""
    message: str
    sequence: int

    @property
    def label(self) -> str:
        return schema.target_label(self.fs, self.target) if self.target else ""

    @property
    def problem(self) -> bool:
        return self.severity in PROBLEM_SEVERITIES


@dataclass(frozen=True)
class Storm:
    """Lines counted but not sent: more than the sensor sends in a round."""

    server: str
    severity: str
    message_number: str
    label: str
    lines: int


@dataclass(frozen=True)
class Subject:
    """Which lines count for an object, and the object in words."""

    label: str
    which: LineFilter


def subject_of(row: Model) -> Subject | None:
    if isinstance(row, Target):
        if row.kind == TargetKind.MGT:
            return None  # the MGT: Lustre names its device MGS, the lines name no target
        fs, ident = schema.split_label(row.label)
        return Subject(row.label, LineFilter(fs=fs, targets=(ident,)))
    if isinstance(row, Server):
        return Subject(row.hostname, LineFilter(servers=(row.hostname,)))
    if isinstance(row, SSU):
        row = row.pair
    if isinstance(row, ServerPair):
        hosts = tuple(sorted(row.servers.values_list("hostname", flat=True)))
        return Subject(f"the servers of {row.name}", LineFilter(servers=hosts)) if hosts else None
    if isinstance(row, Filesystem):
        return Subject(f"filesystem {row.name}", LineFilter(fs=row.name))
    return None


_KEYED = {
    "target": Target,
    "server": Server,
    "serverpair": ServerPair,
    "ssu": SSU,
    "filesystem": Filesystem,
}


def subject_of_key(key: str) -> Subject | None:
    """The subject of a health object's key ("target:12", "server:3"); None for objects whose
    lines no filter finds (arrays, drives) or that are gone."""
    model_name, _, pk = key.partition(":")
    model = _KEYED.get(model_name)
    if model is None or not pk.isdigit():
        return None
    row = model.objects.filter(pk=int(pk)).first()
    return subject_of(row) if row is not None else None


def _line(row: dict) -> KernelLine:
    return KernelLine(
        at=datetime.fromtimestamp(row["time"] / 1000, UTC),
        server=row.get(schema.SERVER) or "",
        subsystem=row.get(schema.SUBSYSTEM) or "",
        severity=row.get(schema.SEVERITY) or "",
        message_number=row.get(schema.MESSAGE_NUMBER) or "",
        fs=row.get(schema.FS) or "",
        target=row.get(schema.TARGET) or "",
        message=row.get("message") or "",
        sequence=int(row.get("sequence") or 0),
    )


def lines_about(
    which: LineFilter, since: float, until: float | None = None, limit: int = PAGE_LIMIT
) -> list[KernelLine]:
    """The lines ``which`` selects from ``since`` to ``until`` (now, and the servers' clock
    slack), newest first, at most ``limit``. Raises ``influx.InfluxError`` when InfluxDB does
    not answer."""
    until = (time.time() if until is None else until) + CLOCK_SLACK_SECONDS
    (rows,) = influx.query_tagged([queries.lines_statement(which, since, until, limit)])
    return [_line(row) for row in rows]


def storms_about(which: LineFilter, since: float, until: float) -> list[Storm]:
    """The storms in the window, the biggest first."""
    (rows,) = influx.query_tagged([queries.storms_statement(which, since, until)])
    storms = [
        Storm(
            server=row.get(schema.SERVER) or "",
            severity=row.get(schema.SEVERITY) or "",
            message_number=row.get(schema.MESSAGE_NUMBER) or "",
            label=schema.point_label(row) if row.get(schema.TARGET) else "",
            lines=int(row.get("lines") or 0),
        )
        for row in rows
        if row.get("lines")
    ]
    return sorted(storms, key=lambda s: (-s.lines, s.server, s.label))


# What Lustre logs when a target evicts a client or a client reconnects (ldlm_lib.c's
# "Client <uuid> (at <nid>) reconnecting", the ping evictor's "haven't heard from client <uuid>
# (at <nid>) ... I am evicting it", ldlm's "evicting client at <nid>" and "A client on nid
# <nid> was evicted due to a lock ... callback time out"). LNet writes a peer as
# "<pid>-<nid>" ("from 12345-10.0.0.5@o2ib"): the process id is not the client's. A network
# name has digits inside as well as at its end (o2ib, o2ib1).
CLIENT_EVENTS = r"evict|reconnecting"
_NID = re.compile(r"(?:\(at |client at |from |on nid )(?:\d+-)?([0-9A-Za-z.:_-]+@[a-z][a-z0-9]*)")


@dataclass(frozen=True)
class ClientTrouble:
    """A client the target evicted or that reconnected to it, in the window."""

    client: str  # its NID
    evictions: int
    reconnects: int
    last: datetime


def client_troubles(
    subject: Subject | None, now: float | None = None
) -> list[ClientTrouble] | None:
    """The clients named in the object's eviction and reconnection lines of the last day, the
    most troubled first; None when InfluxDB does not answer."""
    if subject is None:
        return []
    now = time.time() if now is None else now
    which = replace(subject.which, message_pattern=CLIENT_EVENTS)
    try:
        lines = lines_about(which, now - PAGE_SECONDS, now, limit=SEARCH_LIMIT * 5)
    except influx.InfluxError:
        return None
    found: dict[str, dict] = {}
    for line in lines:
        match = _NID.search(line.message)
        if match is None:
            continue
        entry = found.setdefault(match[1], {"evictions": 0, "reconnects": 0, "last": line.at})
        entry["evictions" if "evict" in line.message else "reconnects"] += 1
        entry["last"] = max(entry["last"], line.at)
    troubles = [ClientTrouble(client, **figures) for client, figures in found.items()]
    return sorted(troubles, key=lambda t: (-t.evictions, -t.reconnects, t.client))


def recent_lines(subject: Subject | None, now: float | None = None) -> list[KernelLine] | None:
    """A page's "What the kernel said": the last day's lines, newest first; None when InfluxDB
    does not answer (the page says the lines cannot be read)."""
    if subject is None:
        return []
    now = time.time() if now is None else now
    try:
        return lines_about(subject.which, now - PAGE_SECONDS, now)
    except influx.InfluxError:
        return None


def mail_lines(object_keys: list[str], at: float) -> list[KernelLine] | None:
    """The lines about the mail's objects in the minutes before it, newest first; None when
    InfluxDB does not answer (a mail never waits for it). Of more than the mail quotes, the
    errors (and worse) are kept before the newest others: a lost group's `unable to
    precreate` is not pushed out by the recovery lines of the targets its server gave up."""
    subjects = [
        subject
        for subject in (subject_of_key(key) for key in dict.fromkeys(object_keys))
        if subject is not None
    ]
    if not subjects:
        return []
    # One request: each object's newest lines and its newest errors.
    statements = [
        queries.lines_statement(which, at - MAIL_SECONDS, at + CLOCK_SLACK_SECONDS, MAIL_LIMIT)
        for subject in subjects
        for which in (subject.which, replace(subject.which, severity=PROBLEM_SEVERITIES[-1]))
    ]
    try:
        answers = influx.query_tagged(statements)
    except influx.InfluxError:
        return None
    found: dict[tuple[str, int, float], KernelLine] = {}
    for line in (_line(row) for rows in answers for row in rows):
        found.setdefault((line.server, line.sequence, line.at.timestamp()), line)
    kept = sorted(found.values(), key=lambda line: (not line.problem, -line.at.timestamp()))
    return sorted(kept[:MAIL_LIMIT], key=lambda line: line.at, reverse=True)
