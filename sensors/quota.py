"""Who owns the data: each target's space and inode accounting per user, group and project
(`owner_usage`), and the quota master's limits and grants (`owner_quota`).

- `osd-*.<target>.quota_slave.acct_user|acct_group|acct_project`: the OSD's own accounting,
  kept whether or not quotas are enforced (`/proc/fs/lustre/osd-ldiskfs/<target>/quota_slave/
  acct_user` on 2.15). One `- id:` and one `usage: { inodes: I, kbytes: K }` line per owner.
  An MDT since 2.14 has a slave per resource, `quota_slave_md` and `quota_slave_dt` (its
  Data-on-MDT blocks), reading the same accounting, with `quota_slave` a link to the first:
  the first of these directories holding a file is read.
- `qmt.<fs>-QMT0000.<dt|md>-<pool>.glb-usr|glb-grp|glb-prj`: on the server of MDT0000 only
  (`/proc/fs/lustre/qmt/<fs>-QMT0000/dt-0x0/glb-usr`). `dt` holds block limits in KiB, `md`
  inode limits; `0x0` is the filesystem's own pool, a 2.14+ OST pool has its name there.
  One `- id:` and one `limits: { hard: H, soft: S, granted: G, time: T }` line per owner.

Standard library only, like the rest of the sensor. The parsers refuse a line they do not know
with its number and text; the collector then reports the file and skips it.
"""

from __future__ import annotations

import os
import re

from sensors import schema
from sensors.layout import LustreTree
from sensors.lineproto import series
from sensors.parsers import ParseError
from sensors.rounds import Round

# The accounting files and the quota master's indexes, by the owner kind they count.
ACCT_FILES = {"acct_user": "user", "acct_group": "group", "acct_project": "project"}
GLB_FILES = {"glb-usr": "user", "glb-grp": "group", "glb-prj": "project"}
# Where a target's quota slave keeps them, in the order read (2.14+ MDTs have the last two).
SLAVE_DIRS = ("quota_slave", "quota_slave_md", "quota_slave_dt")
# The quota master's resource types: `dt` limits are KiB, `md` limits are inodes.
QUOTA_UNITS = {"dt": "kbytes", "md": "inodes"}

_HEADER_RE = re.compile(r"^[A-Za-z]\w*:?$")
_ID_RE = re.compile(r"^- id:\s+(\d+)\s*$")
_BODY_RE = re.compile(r"^\s+(\w+):\s+\{(.*)\}\s*$")
_ITEM_RE = re.compile(r"^\s*(\w+):\s*(\d+)\s*$")


def _quota_entries(text: str, body: str, keys: tuple[str, ...]) -> list[tuple[int, dict]]:
    """The `- id:` entries of an accounting file or a quota master index: [(id, {key: int})].

    The first line may name the index (`usr_accounting:`, `global_pool0_dt_usr`)."""
    entries: list[tuple[int, dict]] = []
    pending: int | None = None
    pending_line = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if number == 1 and _HEADER_RE.match(line.strip()):
            continue
        found = _ID_RE.match(line)
        if found:
            if pending is not None:
                raise ParseError(f"line {pending_line}: id {pending} has no {body} line")
            pending, pending_line = int(found.group(1)), number
            continue
        found = _BODY_RE.match(line)
        if not found or found.group(1) != body or pending is None:
            raise ParseError(f"line {number}: not a {body} line of an id: {line.strip()!r}")
        values = {}
        for item in found.group(2).split(","):
            pair = _ITEM_RE.match(item)
            if not pair:
                raise ParseError(f"line {number}: not `name: integer`: {item.strip()!r}")
            values[pair.group(1)] = int(pair.group(2))
        missing = [key for key in keys if key not in values]
        if missing:
            raise ParseError(f"line {number}: no {', '.join(missing)}: {line.strip()!r}")
        entries.append((pending, values))
        pending = None
    if pending is not None:
        raise ParseError(f"line {pending_line}: id {pending} has no {body} line")
    return entries


def parse_quota_accounting(text: str) -> list[tuple[int, int, int]]:
    """An `acct_user`, `acct_group` or `acct_project` file: [(id, kbytes, inodes)]."""
    return [
        (owner, values["kbytes"], values["inodes"])
        for owner, values in _quota_entries(text, "usage", ("inodes", "kbytes"))
    ]


def parse_quota_limits(text: str) -> list[tuple[int, dict]]:
    """A quota master index (`glb-usr`, `glb-grp`, `glb-prj`): [(id, {"hard", "soft",
    "granted", "time"})]. Limits of 0 mean none. `time` is Lustre's as printed: for id 0 the
    grace period in seconds, for an owner over its soft limit the end of its grace (seconds
    since the epoch), else 0."""
    return _quota_entries(text, "limits", ("hard", "soft", "granted", "time"))


def collect_usage(tree: LustreTree, rnd: Round) -> None:
    """`owner_usage` of every target of the server, and `owner_quota` when it runs the quota
    master."""
    for device, directories in sorted(tree.device_dirs(tree.osd_types()).items()):
        ident = schema.split_device(device)
        if ident is None:
            continue  # MGS, or an OSD that is not a target's
        fs, target = ident
        files = tree.device_files(
            [os.path.join(d, slave) for slave in SLAVE_DIRS for d in directories]
        )
        tail = series("", {**rnd.tags, schema.FS: fs, schema.TARGET: target})
        for filename, kind in ACCT_FILES.items():
            if filename in files:
                _usage_points(rnd, tail, kind, files[filename])
    for device, directories in sorted(tree.device_dirs(["qmt"]).items()):
        fs, _, name = device.rpartition("-")
        if not fs or not name.startswith("QMT"):
            continue
        _quota_points(tree, rnd, fs, directories)


def _usage_points(rnd: Round, tail: str, kind: str, path: str) -> None:
    entries = rnd.parse(path, parse_quota_accounting)
    if not entries:
        return
    prefix = f"{schema.OWNER_USAGE.name}{tail},{schema.KIND}={kind},{schema.ID}="
    timestamp = rnd.timestamp
    rnd.lines.extend(
        f"{prefix}{owner} kbytes={kbytes}i,inodes={inodes}i {timestamp}"
        for owner, kbytes, inodes in entries
    )


def _quota_points(tree: LustreTree, rnd: Round, fs: str, directories: list[str]) -> None:
    """One point per pool, kind and id: the `dt` (KiB) and `md` (inode) limits together."""
    owners: dict[tuple[str, str, int], dict] = {}
    for pool_dir, pool_dirs in sorted(_subdirectories(directories).items()):
        resource, _, pool = pool_dir.partition("-")
        unit = QUOTA_UNITS.get(resource)
        if unit is None or not pool:
            continue
        files = tree.device_files(pool_dirs)
        for filename, kind in GLB_FILES.items():
            if filename not in files:
                continue
            for owner, limits in rnd.parse(files[filename], parse_quota_limits) or ():
                fields = owners.setdefault((pool, kind, owner), {})
                for key in ("hard", "soft", "granted", "time"):
                    fields[f"{unit}_{key}"] = limits[key]
    for (pool, kind, owner), fields in sorted(owners.items()):
        rnd.add(
            schema.OWNER_QUOTA.name,
            {schema.FS: fs, schema.POOL: pool, schema.KIND: kind, schema.ID: str(owner)},
            fields,
        )


def _subdirectories(directories: list[str]) -> dict[str, list[str]]:
    """The quota master's pool directories (`dt-0x0`, `md-0x0`, `dt-flash`) over the trees."""
    found: dict[str, list[str]] = {}
    for directory in directories:
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir():
                        found.setdefault(entry.name, []).append(entry.path)
        except OSError:
            continue  # gone since the listing (the MDT unmounted)
    return found
