"""The usage by owner of a filesystem and window, read from InfluxDB: the page, the API, the
target page and the alert rules call it. The maths is ``portal.usage.maths``; the statements
``metrics.influxql.usage``.

Ids are numbers unless the site named them: an uploaded ``getent passwd``/``getent group``
output, or the management server's own NSS (``pwd``/``grp``), stored as ``OwnerName`` rows.
Projects have no NSS map: they stay numbers.
"""

from __future__ import annotations

import grp
import pwd
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import transaction

from metrics.influxql import usage as queries
from portal import influxdb as influx
from portal.health.models import HealthSettings
from portal.health.services.charts import sources_for
from portal.inventory.models import Filesystem
from portal.usage import choices, maths
from portal.usage.models import OwnerName
from portal.web.query_numbers import BadParameter, time_in_range
from portal.web.shared_cache import reused
from sensors import schema

MAX_WINDOW_SECONDS = 366 * 86400


class WindowError(BadParameter):
    """A window that cannot be read; ``field`` names the parameter at fault."""


@dataclass(frozen=True)
class Window:
    since: float
    until: float
    label: str  # "24h", "7d", "30d", or "" for a range given as since/until

    @property
    def seconds(self) -> float:
        return self.until - self.since

    def query(self) -> dict[str, str]:
        """The URL parameters that give this window again."""
        if self.label:
            return {"window": self.label}
        return {"since": _iso(self.since), "until": _iso(self.until)}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(field: str, text: str) -> float:
    """Epoch seconds or an ISO 8601 time (UTC when it names no zone), from 1970 to 2200."""
    text = text.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            seconds = float(text)
        except ValueError:
            raise WindowError(
                field, f"{text!r} is not a time (2026-11-23T08:00:00Z or epoch seconds)"
            ) from None
        return time_in_range(field, seconds, text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return time_in_range(field, moment.timestamp(), text)


def parse_window(params, now: float | None = None) -> Window:
    """``window=24h|7d|30d``, or ``since`` (and ``until``, default now) as a range."""
    now = time.time() if now is None else now
    since_text, until_text = params.get("since", ""), params.get("until", "")
    if since_text or until_text:
        if not since_text:
            raise WindowError("since", "give the start of the range as well as its end")
        since = parse_time("since", since_text)
        until = parse_time("until", until_text) if until_text else now
        if until <= since:
            raise WindowError("until", "the end of the range must be after its start")
        if until - since > MAX_WINDOW_SECONDS:
            raise WindowError("since", "a range of at most a year can be read")
        return Window(since, min(until, now), "")
    label = params.get("window") or choices.DEFAULT_WINDOW
    if label not in choices.WINDOWS:
        raise WindowError("window", f"{label!r} is not one of {', '.join(choices.WINDOWS)}")
    return Window(now - choices.WINDOWS[label], now, label)


def filesystem_of(params) -> Filesystem | None:
    """The filesystem asked for (``fs``), else the first one."""
    name = params.get("fs", "")
    if name:
        found = Filesystem.objects.filter(name=name).first()
        if found is None:
            raise WindowError("fs", f"there is no filesystem {name!r}")
        return found
    return Filesystem.objects.order_by("name").first()


# --- names -------------------------------------------------------------------------------------


def names() -> dict[str, dict[str, str]]:
    """{kind: {id: name}} of the named ids (ids as the points tag them: decimal text)."""
    found: dict[str, dict[str, str]] = {kind: {} for kind in maths.KINDS}
    for kind, number, name in OwnerName.objects.values_list("kind", "number", "name"):
        found[kind][str(number)] = name
    return found


@transaction.atomic
def store_names(kind: str, mapping: dict[int, str], source: str) -> int:
    """Replace the names of ``kind`` by ``mapping``; return how many are stored."""
    OwnerName.objects.filter(kind=kind).delete()
    OwnerName.objects.bulk_create(
        OwnerName(kind=kind, number=number, name=name, source=source)
        for number, name in sorted(mapping.items())
    )
    return len(mapping)


def nss_names(kind: str) -> dict[int, str]:
    """The management server's own users or groups (``getent`` through Python's NSS)."""
    if kind == choices.NamedKind.USER:
        entries = [(entry.pw_uid, entry.pw_name) for entry in pwd.getpwall()]
    else:
        entries = [(entry.gr_gid, entry.gr_name) for entry in grp.getgrall()]
    mapping: dict[int, str] = {}
    for number, name in entries:
        if maths.NAME_RE.fullmatch(name):  # the upload's rule: nothing a page could not show
            mapping.setdefault(number, name)  # NSS answers the first entry of an id, as here
    return mapping


def read_nss_names(kind: str) -> int:
    return store_names(kind, nss_names(kind), choices.NameSource.NSS)


# --- reading the points ------------------------------------------------------------------------


def _by_owner(rows: list[dict], field: str) -> dict[str, dict[str, dict[str, float]]]:
    """{kind: {id: {field: value}}} of a statement grouped by kind and id."""
    found: dict[str, dict[str, dict[str, float]]] = {kind: {} for kind in maths.KINDS}
    for row in rows:
        kind, owner = row.get(schema.KIND) or "", row.get(schema.ID) or ""
        if kind in found and owner and row.get(field) is not None:
            found[kind].setdefault(owner, {})[field] = float(row[field])
    return found


def _merge(*parts: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict[str, dict]]:
    merged: dict[str, dict[str, dict]] = {kind: {} for kind in maths.KINDS}
    for part in parts:
        for kind, owners in part.items():
            for owner, values in owners.items():
                merged[kind].setdefault(owner, {}).update(values)
    return merged


def read_usage(window: Window, fs: str) -> dict:
    """The window's first and last totals per owner, when they were taken, the newest limits
    and the filesystem's capacity; from the first retention policy that holds accounting."""
    newest_since = window.until - choices.NEWEST_SECONDS
    for source in sources_for(int(window.seconds)):
        spans = influx.query_tagged(
            queries.span_statements(source, fs, window.since, window.until), epoch="s"
        )
        if not spans[0]:
            continue
        started, ended = spans[0][0]["time"], spans[1][0]["time"]
        statements = queries.growth_statements(source, fs, window.since, window.until)
        statements.append(queries.limits_statement(fs, newest_since, window.until))
        statements.append(queries.capacity_statement(fs, newest_since, window.until))
        statements += queries.owner_span_statements(source, fs, window.since, window.until)
        kb_first, kb_last, in_first, in_last, limits, capacity, own_first, own_last = (
            influx.query_tagged(statements, epoch="s")
        )
        limit_fields = schema.OWNER_QUOTA.fields
        return {
            "source": source,
            "started": started,
            "ended": ended,
            "first": _merge(_by_owner(kb_first, "kbytes"), _by_owner(in_first, "inodes")),
            "last": _merge(_by_owner(kb_last, "kbytes"), _by_owner(in_last, "inodes")),
            "limits": _merge(*(_by_owner(limits, field) for field in limit_fields)),
            "capacity": capacity[0] if capacity else {},
            "spans": _spans(own_first, own_last),
        }
    return {}


def _spans(firsts: list[dict], lasts: list[dict]) -> dict[str, dict[str, float]]:
    """Seconds from each owner's first to its last point of the window, per kind and id."""
    started = {(row.get(schema.KIND), row.get(schema.ID)): row["time"] for row in firsts}
    spans: dict[str, dict[str, float]] = {kind: {} for kind in maths.KINDS}
    for row in lasts:
        kind, owner = row.get(schema.KIND), row.get(schema.ID)
        if kind in spans and (kind, owner) in started:
            spans[kind][owner] = row["time"] - started[(kind, owner)]
    return spans


def thresholds(capacity: dict) -> maths.Thresholds:
    health = HealthSettings.load()
    total, free = capacity.get("kbytes_total"), capacity.get("kbytes_free")
    return maths.Thresholds(
        total_kbytes=total,
        used_kbytes=(total - free) if total is not None and free is not None else None,
        warning_percent=health.capacity_warning_percent,
        critical_percent=health.capacity_critical_percent,
    )


def owners(window: Window, fs: str, now: float | None = None) -> tuple[list[dict], dict]:
    """Every owner's row (``maths.owner_rows``) of the filesystem, and what was read."""
    now = time.time() if now is None else now
    read = read_usage(window, fs)
    if not read:
        return [], {}
    named = names()
    limits_of = thresholds(read["capacity"])
    rows = []
    for kind in maths.KINDS:
        rows += maths.owner_rows(
            kind,
            # A window whose first and last points are one moment has no growth.
            read["first"][kind] if read["ended"] > read["started"] else {},
            read["last"][kind],
            read["limits"][kind],
            seconds=read["ended"] - read["started"],
            spans=read["spans"][kind],
            until=read["ended"],
            now=now,
            thresholds=limits_of,
            names=named[kind],
        )
    return rows, read


def target_owners(fs: str, until: float, target: str = "") -> list[dict]:
    """Whose data fills each OST of the filesystem (or one target), newest figures."""
    (points,) = influx.query_tagged(
        [queries.target_owners_statement(fs, until - choices.NEWEST_SECONDS, until, target)],
        epoch="s",
    )
    return maths.per_ost(points, names())


def report(window: Window, filesystem: Filesystem | None, now: float | None = None) -> dict:
    """The usage by owner of the window, as the API returns it."""
    started = time.perf_counter()
    fs = filesystem.name if filesystem else None
    rows, read = owners(window, fs, now) if fs else ([], {})
    body: dict = {
        "window": {"since": read["started"], "until": read["ended"]} if read else None,
        "top": {
            kind: {
                unit: maths.top([r for r in rows if r["kind"] == kind], unit)
                for unit in maths.UNITS
            }
            for kind in maths.KINDS
        },
        "over_soft": maths.over_soft(rows),
        "osts": target_owners(fs, window.until) if fs and read else [],
        "capacity": _capacity(read),
    }
    body["request"] = {
        "since": window.since,
        "until": window.until,
        "window": window.label or None,
        "fs": fs,
        "policy": (read["source"].policy or "raw") if read else None,
        "owners": len(rows),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return body


def _capacity(read: dict) -> dict | None:
    if not read or not read["capacity"].get("kbytes_total"):
        return None
    limits = thresholds(read["capacity"])
    return {
        "kbytes_total": limits.total_kbytes,
        "kbytes_used": limits.used_kbytes,
        "warning_percent": limits.warning_percent,
        "critical_percent": limits.critical_percent,
    }


# --- alert rules -------------------------------------------------------------------------------


def label(row: dict) -> str:
    """ "user alice (1000)", "project 42": an owner as the pages and mails name it."""
    return (
        f"{row['kind']} {row['name']} ({row['id']})"
        if row["name"]
        else f"{row['kind']} {row['id']}"
    )


def owners_now(now: float) -> dict[str, list[dict]]:
    """Every filesystem's owners with their growth over ``choices.ALERT_WINDOW_SECONDS``, read
    at most once per ``choices.ALERT_REUSE_SECONDS`` (the sensors send the accounting once a
    minute; an alert round comes every health round)."""

    def read() -> dict[str, list[dict]]:
        window = Window(now - choices.ALERT_WINDOW_SECONDS, now, "")
        return {
            fs: owners(window, fs, now)[0]
            for fs in Filesystem.objects.order_by("name").values_list("name", flat=True)
        }

    return reused("usage:owners-now", choices.ALERT_REUSE_SECONDS, read)
