"""The usage by owner of one filesystem and window, in plain Python (no Django): the top users,
groups and projects by space and by files, each one's growth over the window and the date it
reaches its hard limit, the owners over their soft limit, and per OST whose data fills it. The
``getent`` parser of the id -> name maps is here too.

Forecasts are linear over the window, from its first and its last totals (as the capacity
forecast of the analytics): an owner without a hard limit is forecast against the filesystem's
capacity thresholds instead (the day its growth alone brings the filesystem there). A date
further than ``HORIZON_SECONDS`` is no date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("user", "group", "project")
UNITS = ("kbytes", "inodes")
HORIZON_SECONDS = 366 * 86400
# Rows of each top list, and owners named per OST.
TOP = 10
TOP_PER_OST = 3

# --- getent ------------------------------------------------------------------------------------

# `getent passwd`: name:password:uid:gid:gecos:home:shell; `getent group`: name:password:gid:members
GETENT_FIELDS = {"passwd": 7, "group": 4}
GETENT_LAYOUT = {
    "passwd": "name:password:uid:gid:gecos:home:shell",
    "group": "name:password:gid:members",
}
# The kind of owner each database names.
GETENT_KINDS = {"passwd": "user", "group": "group"}
# Any name NSS can give (useradd's, Samba's trailing $, a directory's "domain users" or
# "DOM\\user"): no control character, no blank at either end, at most 256 characters.
NAME_RE = re.compile(r"(?=\S)[^\x00-\x1f\x7f]{1,256}(?<=\S)")
MAX_ID = 4294967294  # (uid_t)-1 is "no id"
# lustre_quota.h: LQUOTA_GRACE_BITS; the bits above are flags (LQUOTA_FLAG_DEFAULT, ...).
GRACE_BITS = 48
GRACE_MASK = (1 << GRACE_BITS) - 1
# Id 0's entry of a quota master index holds the filesystem's defaults (the grace periods, the
# limits `lfs setquota -U/-G/-P` set), not root's limits: root is exempt from quotas.
DEFAULTS_ID = "0"
MAX_LINES = 200_000


class GetentError(ValueError):
    """A ``getent`` output refused: ``line`` is the first line at fault (1-based)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line


def parse_getent(text: str, database: str, repeats: list[str] | None = None) -> dict[int, str]:
    """``getent passwd`` or ``getent group`` output: {id: name}. Every line must be one entry
    of that database; the first that is not is refused with its number and the reason. An id
    listed again (a host with `passwd: files sss` lists a user of both) keeps its first name,
    as NSS answers it; each repeat is said in ``repeats``."""
    if database not in GETENT_FIELDS:
        raise ValueError(f"no getent database {database!r} (passwd or group)")
    fields, what = GETENT_FIELDS[database], "uid" if database == "passwd" else "gid"
    names: dict[int, str] = {}
    first_line: dict[int, int] = {}
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise GetentError(1, f"no entries: paste the output of `getent {database}`")
    if len(lines) > MAX_LINES:
        raise GetentError(MAX_LINES + 1, f"more than {MAX_LINES:,} entries")
    for number, line in enumerate(lines, 1):
        parts = line.split(":")
        if len(parts) != fields:
            raise GetentError(
                number,
                f"{len(parts)} fields separated by ':', a getent {database} line has {fields} "
                f"({GETENT_LAYOUT[database]})",
            )
        name, id_text = parts[0], parts[2]
        if not NAME_RE.fullmatch(name):
            raise GetentError(number, f"{name!r} is not a {GETENT_KINDS[database]} name")
        if not id_text.isascii() or not id_text.isdigit():
            raise GetentError(number, f"the {what} {id_text!r} of {name!r} is not a number")
        owner = int(id_text)
        if owner > MAX_ID:
            raise GetentError(number, f"the {what} {owner} of {name!r} is above {MAX_ID}")
        if owner in names:
            if repeats is not None:
                repeats.append(
                    f"line {number}: {what} {owner} ({name!r}) kept {names[owner]!r} of line "
                    f"{first_line[owner]}"
                )
            continue
        names[owner], first_line[owner] = name, number
    return names


# --- the owners ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The filesystem's capacity (KiB) and its capacity thresholds (percent full)."""

    total_kbytes: float | None
    used_kbytes: float | None
    warning_percent: float
    critical_percent: float


def _rate(first: float | None, last: float, seconds: float) -> float | None:
    """Growth per second over the window (None when the window holds one moment)."""
    if first is None or seconds <= 0:
        return None
    return (last - first) / seconds


def reaches(used: float, limit: float, rate: float | None, at: float) -> float | None:
    """When ``used`` growing at ``rate`` per second from ``at`` reaches ``limit``: ``at``
    when it is there already, None when it never does within the horizon."""
    if used >= limit:
        return at
    if not rate or rate <= 0:
        return None
    seconds = (limit - used) / rate
    return at + seconds if seconds <= HORIZON_SECONDS else None


def _grace(used: float, soft: float, end: float, now: float) -> dict | None:
    """Over the soft limit: in grace until ``end``, or past it (None: not over it). Lustre
    keeps flags in the top bits of a quota entry's time (an id on the default quota); the
    seconds are the low ``GRACE_BITS``."""
    if not soft or used <= soft:
        return None
    end = float(int(end) & GRACE_MASK)
    if end and end <= now:
        return {"state": "past_grace", "grace_ends": end}
    return {"state": "in_grace", "grace_ends": end or None}


def owner_rows(
    kind: str,
    first: dict[str, dict[str, float]],
    last: dict[str, dict[str, float]],
    limits: dict[str, dict[str, float]],
    *,
    seconds: float,
    until: float,
    now: float,
    thresholds: Thresholds,
    names: dict[str, str],
    spans: dict[str, float] | None = None,
) -> list[dict]:
    """One row per owner of ``kind``: its space and files now, their growth over the window
    (``seconds`` from the first to the last point; ``spans``: an owner's own seconds from its
    first to its last point, when it first wrote within the window), its limits, when it
    reaches them, and whether it is over its soft limit. ``first``/``last``/``limits`` are
    keyed by id."""
    rows = []
    spans = spans or {}
    limits = {owner: limit for owner, limit in limits.items() if owner != DEFAULTS_ID}
    for owner in sorted(set(last) | set(limits), key=_id_order):
        seconds_of = min(spans.get(owner, seconds), seconds)
        now_used = last.get(owner, {})
        start = first.get(owner, {})
        limit = limits.get(owner, {})
        row = {"kind": kind, "id": owner, "name": names.get(owner, "")}
        for unit in UNITS:
            used = float(now_used.get(unit) or 0)
            rate = _rate(start.get(unit), used, seconds_of) if owner in first else None
            hard, soft = (
                float(limit.get(f"{unit}_hard") or 0),
                float(limit.get(f"{unit}_soft") or 0),
            )
            row[unit] = used
            row[f"{unit}_growth"] = None if rate is None else rate * seconds_of
            row[f"{unit}_per_day"] = None if rate is None else rate * 86400
            row[f"{unit}_hard"] = hard or None
            row[f"{unit}_soft"] = soft or None
            row[f"{unit}_percent"] = round(100 * used / hard, 1) if hard else None
            row[f"{unit}_limit_at"] = reaches(used, hard, rate, until) if hard else None
            row[f"{unit}_over_soft"] = _grace(
                used, soft, float(limit.get(f"{unit}_time") or 0), now
            )
        row["capacity"] = _capacity_dates(row, thresholds, until)
        rows.append(row)
    return rows


def _capacity_dates(row: dict, thresholds: Thresholds, until: float) -> dict | None:
    """An owner without a hard limit on space: when its growth alone brings the filesystem to
    its warning and critical thresholds."""
    if row["kbytes_hard"] or not thresholds.total_kbytes or thresholds.used_kbytes is None:
        return None
    rate = None if row["kbytes_per_day"] is None else row["kbytes_per_day"] / 86400
    dates = {}
    for level in ("warning", "critical"):
        percent = getattr(thresholds, f"{level}_percent")
        limit = thresholds.total_kbytes * percent / 100
        # A filesystem past the level already: "now" only for an owner who grows (one who
        # shrinks or stands still is not what keeps it there).
        growing = rate is not None and rate > 0
        dates[f"{level}_at"] = (
            reaches(thresholds.used_kbytes, limit, rate, until) if growing else None
        )
        dates[f"{level}_percent"] = percent
    return dates


def _id_order(owner: str) -> tuple[int, str]:
    return (int(owner), owner) if owner.isdigit() else (2**63, owner)


def top(rows: list[dict], unit: str, count: int = TOP) -> list[dict]:
    """The ``count`` owners with the most ``unit``, most first (ties by id)."""
    held = [row for row in rows if row[unit] > 0]
    return sorted(held, key=lambda row: (-row[unit], _id_order(row["id"])))[:count]


def over_soft(rows: list[dict]) -> list[dict]:
    """The owners over a soft limit (space or files), past their grace first, then by the end
    of their grace."""
    found = [row for row in rows if row["kbytes_over_soft"] or row["inodes_over_soft"]]

    def order(row: dict) -> tuple:
        states = [row[f"{unit}_over_soft"] for unit in UNITS if row[f"{unit}_over_soft"]]
        past = any(state["state"] == "past_grace" for state in states)
        ends = min((state["grace_ends"] or 2**63) for state in states)
        return (not past, ends, row["kind"], _id_order(row["id"]))

    return sorted(found, key=order)


def per_ost(
    points: list[dict], names: dict[str, dict[str, str]], count: int = TOP_PER_OST
) -> list[dict]:
    """Whose data fills each OST: per OST and kind, the ``count`` owners with the most space
    and their share of the OST's data (all owners of a kind hold all of it: every file has
    one user, one group and one project). ``points``: {target, kind, id, kbytes}."""
    by_target: dict[str, dict[str, dict[str, float]]] = {}
    for point in points:
        kind, owner = point.get("kind") or "", point.get("id") or ""
        if kind not in KINDS or not owner:
            continue
        owners = by_target.setdefault(point["target"], {}).setdefault(kind, {})
        owners[owner] = owners.get(owner, 0.0) + float(point.get("kbytes") or 0)
    osts = []
    for target in sorted(by_target):
        wholes = {kind: sum(owners.values()) for kind, owners in by_target[target].items()}
        entry = {"target": target, "kbytes": max(wholes.values()), "owners": {}}
        for kind in KINDS:
            owners = by_target[target].get(kind, {})
            whole = wholes.get(kind, 0.0)
            ranked = sorted(
                ((owner, kb) for owner, kb in owners.items() if kb > 0),
                key=lambda item: (-item[1], _id_order(item[0])),
            )[:count]
            entry["owners"][kind] = [
                {
                    "kind": kind,
                    "id": owner,
                    "name": names.get(kind, {}).get(owner, ""),
                    "kbytes": kb,
                    "share": round(kb / whole, 4) if whole else None,
                }
                for owner, kb in ranked
            ]
        osts.append(entry)
    return osts


def limit_percent(row: dict) -> tuple[float, str] | None:
    """The owner's highest use of a hard limit, in percent, and of which unit."""
    found = [(row[f"{unit}_percent"], unit) for unit in UNITS if row[f"{unit}_percent"] is not None]
    return max(found) if found else None


def limit_within(row: dict, now: float, seconds: float) -> tuple[float, str] | None:
    """The earliest date within ``seconds`` from ``now`` at which the owner reaches a hard
    limit, and of which unit (None: none that soon)."""
    found = [
        (row[f"{unit}_limit_at"], unit)
        for unit in UNITS
        if row[f"{unit}_limit_at"] is not None and row[f"{unit}_limit_at"] <= now + seconds
    ]
    return min(found) if found else None
