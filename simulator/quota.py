"""Who owns the data on the virtual rack: each target's space and inode accounting per user,
group and project, and the quota master's limits (`lfs setquota`, `lfs quota`).

Every job of the workload writes as a user (uid), a group (gid) and a project id (0: none):
named when the job is started by hand, else one of `SITE_USERS` with its primary group. What
a job writes on an OST and the files it creates (one object per OST it is striped on, one inode
on the MDT) count for its owners there, until the job deletes them (`Owned`, kept with each
target in rack.json). The data a scenario finds on the filesystem when it starts (its seeded
fill) belongs to `SITE_USERS` and root in the fixed shares of `EXISTING_SHARES`: a target's
accounting always adds up to what it holds.

The OSDs print the accounting as Lustre 2.15's `lprocfs_quota_seq_show` does
(`osd-ldiskfs/<target>/quota_slave/acct_user|acct_group|acct_project`); the quota master (the
server of MDT0000) prints its indexes (`qmt/<fs>-QMT0000/{dt,md}-0x0/glb-usr|glb-grp|glb-prj`):
`dt` block limits in KiB, `md` inode limits, id 0 carrying the grace periods (a week by
default), an owner over its soft limit the end of its grace (seconds since the epoch), set when
it first went over, as the quota master does. Limits are recorded and shown; the imitation does
not refuse writes over them (no EDQUOT).
"""

from __future__ import annotations

from simulator.state import RackError

KINDS = ("user", "group", "project")
ACCT_FILES = {"user": "acct_user", "group": "acct_group", "project": "acct_project"}
ACCT_HEADERS = {"user": "usr_accounting:", "group": "grp_accounting:", "project": "prj_accounting:"}
GLB_NAMES = {"user": "usr", "group": "grp", "project": "prj"}
GRACE = 7 * 24 * 3600  # the default block and inode grace periods
# The site's users (uid -> primary gid) who own the scenarios' jobs and the data already there.
SITE_USERS = {1001: 2001, 1002: 2001, 1003: 2002, 1004: 2002, 1005: 2003, 1006: 2003}
# Who owns the data a scenario finds on the filesystem (uid: share); gid from SITE_USERS.
EXISTING_SHARES = (
    (0, 0.05),
    (1001, 0.30),
    (1002, 0.20),
    (1003, 0.20),
    (1004, 0.10),
    (1005, 0.10),
    (1006, 0.05),
)


def default_owner(job_number: int) -> dict:
    uid = sorted(SITE_USERS)[job_number % len(SITE_USERS)]
    return {"uid": uid, "gid": SITE_USERS[uid], "projid": 0}


def check_owner(uid: int | None, gid: int | None, projid: int | None) -> dict:
    """The owner fields of a job started by hand (None: a site user's, with its group)."""
    for name, value in (("--uid", uid), ("--gid", gid), ("--projid", projid)):
        if value is not None and not 0 <= value < 2**32 - 1:
            raise RackError(f"{name} must be an id from 0 to 4294967294, not {value}")
    if uid is None:
        owner = default_owner(0)
    else:
        owner = {"uid": uid, "gid": SITE_USERS.get(uid, uid), "projid": 0}
    if gid is not None:
        owner["gid"] = gid
    if projid is not None:
        owner["projid"] = projid
    return owner


def _ids(job: dict) -> tuple[tuple[str, int], ...]:
    owner = job.get("owner") or default_owner(0)
    return (("user", owner["uid"]), ("group", owner["gid"]), ("project", owner["projid"]))


def charge(target: dict, job: dict, kib: int = 0, inodes: int = 0) -> None:
    """The job's owners hold `kib` and `inodes` more (or less) on `target`."""
    if not kib and not inodes:
        return
    owned = target.setdefault("owned", {})
    for kind, owner in _ids(job):
        entry = owned.setdefault(kind, {}).setdefault(str(owner), [0, 0])
        entry[0] = max(0, entry[0] + kib)
        entry[1] = max(0, entry[1] + inodes)


def accounting(target: dict) -> dict[str, dict[int, tuple[int, int]]]:
    """{kind: {id: (kbytes, inodes)}} of a target: what the jobs' owners hold, and the rest of
    what it holds (its data from before) shared by EXISTING_SHARES."""
    used_kib = target["used_kib"] if target["kind"] == "OST" else 0
    files = target["files_used"]
    result: dict[str, dict[int, tuple[int, int]]] = {}
    for kind in KINDS:
        owned = {int(k): tuple(v) for k, v in target.get("owned", {}).get(kind, {}).items()}
        rest_kib = max(0, used_kib - sum(v[0] for v in owned.values()))
        rest_files = max(0, files - sum(v[1] for v in owned.values()))
        table: dict[int, list[int]] = {owner: list(v) for owner, v in owned.items()}
        table.setdefault(0, [0, 0])  # root always has the filesystem's own files
        for uid, share in EXISTING_SHARES:
            owner = uid if kind == "user" else (SITE_USERS.get(uid, 0) if kind == "group" else 0)
            entry = table.setdefault(owner, [0, 0])
            entry[0] += int(rest_kib * share)
            entry[1] += int(rest_files * share)
        result[kind] = {owner: (v[0], v[1]) for owner, v in sorted(table.items())}
    return result


def acct_text(kind: str, table: dict[int, tuple[int, int]]) -> str:
    lines = [f"{ACCT_HEADERS[kind]}\n"]
    for owner, (kbytes, inodes) in table.items():
        lines.append(f"- {'id:':<8} {owner}\n")
        lines.append(f"  {'usage:':<8} {{ inodes: {inodes:20d}, kbytes: {kbytes:20d} }}\n")
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# the quota master


def filesystem_usage(state: dict, fsname: str) -> dict[str, dict[int, list[int]]]:
    """{kind: {id: [kbytes, inodes]}} over every target of the filesystem (inodes: its MDTs',
    as the quota master counts them)."""
    usage: dict[str, dict[int, list[int]]] = {kind: {} for kind in KINDS}
    for target in state["targets"].values():
        if target["fsname"] != fsname or target["kind"] not in ("OST", "MDT"):
            continue
        for kind, table in accounting(target).items():
            for owner, (kbytes, inodes) in table.items():
                entry = usage[kind].setdefault(owner, [0, 0])
                entry[0] += kbytes
                if target["kind"] == "MDT":
                    entry[1] += inodes
    return usage


def master(state: dict, fsname: str) -> dict:
    quota = state.setdefault("quota", {})
    return quota.setdefault(
        fsname,
        {"limits": {kind: {} for kind in KINDS}, "grace": {k: [GRACE, GRACE] for k in KINDS}},
    )


def set_limits(state: dict, fsname: str, kind: str, owner: int, limits: dict, now: float) -> None:
    """`lfs setquota`: the limits given (bsoft, bhard in KiB; isoft, ihard in inodes) replace
    the owner's; all four 0 remove its entry."""
    table = master(state, fsname)["limits"][kind]
    entry = table.setdefault(
        str(owner), {"bsoft": 0, "bhard": 0, "isoft": 0, "ihard": 0, "btime": 0, "itime": 0}
    )
    entry.update(limits)
    if not any(entry[key] for key in ("bsoft", "bhard", "isoft", "ihard")):
        del table[str(owner)]
    observe(state, now)


def observe(state: dict, now: float) -> None:
    """Start (or end) the grace of each owner over (or back under) a soft limit."""
    for fsname, fs_quota in state.get("quota", {}).items():
        if not any(fs_quota["limits"].values()):
            continue
        usages = filesystem_usage(state, fsname)
        for kind, table in fs_quota["limits"].items():
            usage = usages[kind]
            block_grace, inode_grace = fs_quota["grace"][kind]
            for owner, entry in table.items():
                kbytes, inodes = usage.get(int(owner), [0, 0])
                for used, soft, time_key, grace in (
                    (kbytes, entry["bsoft"], "btime", block_grace),
                    (inodes, entry["isoft"], "itime", inode_grace),
                ):
                    if soft and used > soft:
                        if not entry[time_key]:
                            entry[time_key] = int(now) + grace
                    else:
                        entry[time_key] = 0


def glb_text(state: dict, fsname: str, kind: str, resource: str, usage: dict) -> str:
    """The quota master's index of one kind and resource (`dt`: KiB, `md`: inodes); `usage`
    is filesystem_usage's for that kind."""
    fs_quota = master(state, fsname)
    grace = fs_quota["grace"][kind][0 if resource == "dt" else 1]
    lines = [f"global_pool0_{resource}_{GLB_NAMES[kind]}\n"]
    rows = [(0, 0, 0, 0, grace)]
    for owner, entry in sorted(fs_quota["limits"][kind].items(), key=lambda item: int(item[0])):
        prefix = "b" if resource == "dt" else "i"
        hard, soft = entry[f"{prefix}hard"], entry[f"{prefix}soft"]
        if int(owner) == 0 or (not hard and not soft):
            continue
        used = usage.get(int(owner), [0, 0])[0 if resource == "dt" else 1]
        granted = min(used, hard) if hard else used
        rows.append((int(owner), hard, soft, granted, entry[f"{prefix}time"]))
    for owner, hard, soft, granted, time in rows:
        lines.append(f"- {'id:':<8} {owner}\n")
        lines.append(
            f"  {'limits:':<8} {{ hard: {hard:20d}, soft: {soft:20d}, granted: {granted:20d}, "
            f"time: {time:20d} }}\n"
        )
    return "".join(lines)
