"""lfs: the quota subcommands of Lustre 2.15's `lfs`, on the rack's quota master
(simulator.quota).

    lfs setquota {-u|-g|-p} ID [-b BSOFT] [-B BHARD] [-i ISOFT] [-I IHARD] MOUNT
    lfs setquota -t {-u|-g|-p} [-b BLOCK_GRACE] [-i INODE_GRACE] MOUNT
    lfs quota [-q] {-u|-g|-p} ID MOUNT
    lfs quota -t {-u|-g|-p} MOUNT

Block limits are KiB unless suffixed (k, M, G, T, P: powers of 1024, as `llapi_parse_size`
takes them); inode limits are counts (k, M, G multiply by 1024 too); limits not given are kept,
0 removes one. Grace periods are seconds or `1w2d3h4m5s`. IDs are numeric (the virtual
servers have no site users to resolve names against). MOUNT names the filesystem: a client
mount whose last component is its name (`/mnt/scratch`), or any path when the rack has one
filesystem.

`lfs quota` prints what lfs's `print_quota_title` and `print_quota` do (`Disk quotas for usr
1001 (uid 1001):`, kbytes and files with their quota, limit and grace: `-` under the soft limit,
the time left (`6d23h59m59s`) in grace, `none` once it ran out, a `*` after a usage over a
limit); `lfs quota -t` the grace periods (`Block grace time: 1w; Inode grace time: 1w`).
"""

from __future__ import annotations

import getopt
import re

from simulator import quota
from simulator.commands import CommandExit, Context

KIND_OPTIONS = {
    "-u": "user",
    "-g": "group",
    "-p": "project",
    "--user": "user",
    "--group": "group",
    "--projid": "project",
}
TITLE = {"user": ("usr", "uid"), "group": ("grp", "gid"), "project": ("prj", "pid")}
LIMIT_OPTIONS = {
    "-b": "bsoft",
    "--block-softlimit": "bsoft",
    "-B": "bhard",
    "--block-hardlimit": "bhard",
    "-i": "isoft",
    "--inode-softlimit": "isoft",
    "-I": "ihard",
    "--inode-hardlimit": "ihard",
}
LIMIT_NAMES = {
    "bsoft": "block-softlimit",
    "bhard": "block-hardlimit",
    "isoft": "inode-softlimit",
    "ihard": "inode-hardlimit",
}
_SIZE = re.compile(r"^(\d+)([kKmMgGtTpP]?)$")
_GRACE = re.compile(r"^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$")
POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
USAGE = (
    "usage: lfs setquota {-u|-g|-p} ID [-b BSOFT] [-B BHARD] [-i ISOFT] [-I IHARD] MOUNT\n"
    "       lfs setquota -t {-u|-g|-p} [-b BLOCK_GRACE] [-i INODE_GRACE] MOUNT\n"
    "       lfs quota [-q] {-u|-g|-p} ID MOUNT\n"
    "       lfs quota -t {-u|-g|-p} MOUNT"
)


def run(ctx: Context, argv: list[str]) -> int:
    if not argv or argv[0] not in ("setquota", "quota"):
        ctx.error(USAGE)
        raise CommandExit(1)
    command, argv = argv[0], argv[1:]
    grace = "-t" in argv  # with -t, -u/-g/-p take no id
    ids = "" if grace else ":"
    try:
        pairs, rest = getopt.gnu_getopt(
            argv,
            f"tqu{ids}g{ids}p{ids}b:B:i:I:",
            [
                f"user{ids and '='}",
                f"group{ids and '='}",
                f"projid{ids and '='}",
                "block-softlimit=",
                "block-hardlimit=",
                "inode-softlimit=",
                "inode-hardlimit=",
            ],
        )
    except getopt.GetoptError as problem:
        ctx.error(f"lfs {command}: {problem}\n{USAGE}")
        raise CommandExit(1) from None
    kinds = [(KIND_OPTIONS[o], v) for o, v in pairs if o in KIND_OPTIONS]
    if len(kinds) != 1 or len(rest) != 1:
        ctx.error(f"lfs {command}: give one of -u, -g or -p and one mount point\n{USAGE}")
        raise CommandExit(1)
    kind, owner_text = kinds[0]
    with ctx.rack() as rack:
        fsname = _filesystem(ctx, command, rack.state, rest[0])
        if grace:
            return _grace(ctx, command, rack, fsname, kind, pairs)
        owner = _owner(ctx, command, kind, owner_text)
        if command == "quota":
            quiet = any(o == "-q" for o, _ in pairs)
            _print_quota(ctx, rack, fsname, kind, owner, rest[0], quiet)
            return 0
        limits = {}
        for option, value in pairs:
            if option in LIMIT_OPTIONS:
                key = LIMIT_OPTIONS[option]
                limits[key] = _size(ctx, key, value)
        if not limits:
            ctx.error(f"lfs setquota: give at least one of -b, -B, -i, -I\n{USAGE}")
            raise CommandExit(1)
        quota.set_limits(rack.state, fsname, kind, owner, limits, rack.now)
        rack.render(_quota_master_hosts(rack.state, fsname))
    return 0


def _filesystem(ctx: Context, command: str, state: dict, mount: str) -> str:
    names = sorted({t["fsname"] for t in state["targets"].values() if t["kind"] != "MGT"})
    last = mount.rstrip("/").rpartition("/")[2]
    if last in names:
        return last
    if len(names) == 1 and mount.startswith("/"):
        return names[0]
    ctx.error(f"lfs {command}: '{mount}' not on a mounted Lustre filesystem")
    raise CommandExit(2)


def _owner(ctx: Context, command: str, kind: str, text: str) -> int:
    if not text.isdigit() or int(text) > 4294967294:
        ctx.error(
            f"lfs {command}: can't find id for name '{text}' ({kind} id): the virtual servers "
            "have no names to look up, give a number from 0 to 4294967294"
        )
        raise CommandExit(22)
    return int(text)


def _size(ctx: Context, key: str, text: str) -> int:
    found = _SIZE.match(text)
    if not found:
        ctx.error(f"lfs setquota: bad {LIMIT_NAMES[key]} '{text}'")
        raise CommandExit(22)
    number, suffix = int(found.group(1)), found.group(2).lower()
    if key.startswith("b"):  # KiB by default; a suffix gives bytes in powers of 1024
        return number if not suffix else number * 1024 ** POWERS[suffix] // 1024
    return number * 1024 ** POWERS[suffix]


def _grace_seconds(ctx: Context, text: str) -> int:
    found = _GRACE.match(text)
    if not text or not found:
        ctx.error(f"lfs setquota: bad grace time '{text}'")
        raise CommandExit(22)
    weeks, days, hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return (((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds


def time_text(seconds: int) -> str:
    """A duration as lfs prints it: weeks, days, hours, minutes, seconds, the zero ones left
    out (`1w`, `6d23h59m59s`, `0s`)."""
    parts = []
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def _grace(ctx: Context, command: str, rack, fsname: str, kind: str, pairs) -> int:
    fs_quota = quota.master(rack.state, fsname)
    periods = fs_quota["grace"][kind]
    if command == "quota":
        block, inode = (time_text(p) for p in periods)
        ctx.print(f"Block grace time: {block}; Inode grace time: {inode}")
        return 0
    given = {o: v for o, v in pairs if o in ("-b", "-i", "--block-grace", "--inode-grace")}
    if not given:
        ctx.error(f"lfs setquota: give -b and/or -i with -t\n{USAGE}")
        raise CommandExit(1)
    if "-b" in given:
        periods[0] = _grace_seconds(ctx, given["-b"])
    if "-i" in given:
        periods[1] = _grace_seconds(ctx, given["-i"])
    rack.render(_quota_master_hosts(rack.state, fsname))
    return 0


def _quota_master_hosts(state: dict, fsname: str) -> list[str]:
    return sorted(
        {
            t["mounted_on"]
            for t in state["targets"].values()
            if t["fsname"] == fsname and t["kind"] == "MDT" and t.get("mounted_on")
        }
    )


def _grace_column(used: int, soft: int, hard: int, ends: int, now: float) -> tuple[str, str]:
    """(the mark after the usage, the grace column) of one resource."""
    if hard and used >= hard:
        return "*", "-"
    if soft and used > soft:
        left = ends - int(now) if ends else 0
        return "*", time_text(left) if left > 0 else "none"
    return " ", "-"


def _print_quota(
    ctx: Context, rack, fsname: str, kind: str, owner: int, mount: str, quiet: bool
) -> None:
    """Grace left is counted on the rack's clock (the quota master's)."""
    state, now = rack.state, rack.now
    usage = quota.filesystem_usage(state, fsname)[kind].get(owner, [0, 0])
    entry = quota.master(state, fsname)["limits"][kind].get(str(owner), {})
    name, letter = TITLE[kind]
    if not quiet:
        ctx.print(f"Disk quotas for {name} {owner} ({letter} {owner}):")
        ctx.print(
            f"{'Filesystem':>15}{'kbytes':>8} {'quota':>7}{'limit':>8}{'grace':>8}"
            f"{'files':>8} {'quota':>7}{'limit':>8}{'grace':>8}"
        )
    row = f"{mount}\n{'':15}" if len(mount) > 15 else f"{mount:>15}"
    for used, soft, hard, ends in (
        (usage[0], entry.get("bsoft", 0), entry.get("bhard", 0), entry.get("btime", 0)),
        (usage[1], entry.get("isoft", 0), entry.get("ihard", 0), entry.get("itime", 0)),
    ):
        mark, grace = _grace_column(used, soft, hard, ends, now)
        row += f" {used:>7}{mark} {soft:>6} {hard:>7} {grace:>7}"
    ctx.print(row)
