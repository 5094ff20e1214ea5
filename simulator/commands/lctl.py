"""lctl: get_param, set_param, list_param, dl (device_list), list_nids, ping, --version.

get_param and list_param search the server's tree like the real lctl (cfs_get_param_paths):
`sys/{fs,kernel/debug}/{lnet,lustre}` then `proc/{fs,sys}/{lnet,lustre}` under the host
root, `.` in a name standing for `/` (NIDs keep their dots), `*`, `?` and `[...]` as in glob.
Output framing is lustre_param.c's: `name=value` for one-line values, `name=` then the value
otherwise; `-n` prints values only, `-N` names only. set_param prints `name=value` for each
parameter set; writing `stats`, `md_stats`, `job_stats` or `brw_stats` clears them, other
writable values are kept by the rack; read-only ones fail with "Permission denied".
"""

from __future__ import annotations

import errno
import getopt
import os
import re
from pathlib import Path

from simulator import topology
from simulator.commands import CommandExit, Context, strerror
from simulator.procfs import host_root

SEARCH_DIRS = (
    "sys/fs/lnet",
    "sys/fs/lustre",
    "sys/kernel/debug/lnet",
    "sys/kernel/debug/lustre",
    "proc/fs/lnet",
    "proc/fs/lustre",
    "proc/sys/lnet",
    "proc/sys/lustre",
)
READ_ONLY = {
    "kbytestotal",
    "kbytesfree",
    "kbytesavail",
    "filestotal",
    "filesfree",
    "health_check",
    "version",
    "recovery_status",
    "num_exports",
    "tot_granted",
    "tot_dirty",
    "tot_pending",
    "fstype",
    "mntdev",
    "blocksize",
    "devices",
}
CLEARABLE = {"stats", "md_stats", "job_stats", "brw_stats"}


def pattern_regex(pattern: str) -> re.Pattern:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == ".":
            out.append("[./]")
        elif c == "[":
            end = pattern.find("]", i)
            if end < 0:
                out.append(re.escape(c))
            else:
                out.append(pattern[i : end + 1])
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + "$")


def find_params(root: Path, pattern: str, *, directories: bool = False) -> list[tuple[str, Path]]:
    """(parameter name, file) for every file under the search dirs matching the pattern."""
    regex = pattern_regex(pattern)
    found: dict[str, Path] = {}
    for top in SEARCH_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            rel_dir = os.path.relpath(dirpath, base)
            names = list(filenames) + [
                d for d in dirnames if os.path.islink(os.path.join(dirpath, d))
            ]
            if directories:
                names += dirnames
            for name in names:
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                if regex.match(rel):
                    param = rel.replace("/", ".")
                    found.setdefault(param, Path(dirpath) / name)
            dirnames.sort()
    return sorted(found.items())


def get_param(ctx: Context, root: Path, argv: list[str]) -> int:
    try:
        pairs, patterns = getopt.gnu_getopt(argv, "nNFRHy", [])
    except getopt.GetoptError as problem:
        ctx.error(f"error: get_param: {problem}")
        return 1
    flags = {k for k, _ in pairs}
    if not patterns:
        ctx.error("get_param: too few arguments")
        ctx.error(
            "usage: get_param [--no-name|-n] [--only-name|-N] [--show-type|-F] "
            "[--recursive|-R] <param_path1 param_path2 ...>"
        )
        return 1
    status = 0
    for pattern in patterns:
        matches = find_params(root, pattern)
        if not matches:
            ctx.error(
                f"error: get_param: param_path '{pattern.replace('.', '/')}': "
                "No such file or directory"
            )
            status = errno.ENOENT
            continue
        for name, path in matches:
            if "-N" in flags:
                ctx.print(name)
                continue
            try:
                value = path.read_text()
            except OSError as problem:
                ctx.error(f"error: get_param: read('{path}') failed: {problem.strerror}")
                status = 1
                continue
            value = value[:-1] if value.endswith("\n") else value
            if "-n" in flags:
                ctx.print(value)
            elif "\n" in value:
                ctx.print(f"{name}=\n{value}")
            else:
                ctx.print(f"{name}={value}")
    return status


def list_param(ctx: Context, root: Path, argv: list[str]) -> int:
    pairs, patterns = getopt.gnu_getopt(argv, "FRD", [])
    status = 0
    for pattern in patterns or ["*"]:
        matches = find_params(root, pattern, directories=True)
        if not matches:
            ctx.error(
                f"error: list_param: param_path '{pattern.replace('.', '/')}': "
                "No such file or directory"
            )
            status = errno.ENOENT
        for name, _path in matches:
            ctx.print(name)
    return status


def set_param(ctx: Context, rack, root: Path, argv: list[str]) -> int:
    try:
        pairs, settings = getopt.gnu_getopt(argv, "nPdF", [])
    except getopt.GetoptError as problem:
        ctx.error(f"error: set_param: {problem}")
        return 1
    quiet = any(k == "-n" for k, _ in pairs)
    if not settings:
        ctx.error("set_param: too few arguments")
        return 1
    status = 0
    server = rack.state["servers"][ctx.host]
    for setting in settings:
        if "=" not in setting:
            ctx.error(f"error: set_param: setting '{setting}': expected 'name=value'")
            status = errno.EINVAL
            continue
        pattern, _, value = setting.partition("=")
        matches = find_params(root, pattern)
        if not matches:
            ctx.error(
                f"error: set_param: param_path '{pattern.replace('.', '/')}': "
                "No such file or directory"
            )
            status = errno.ENOENT
            continue
        for name, path in matches:
            leaf = path.name
            if leaf in READ_ONLY:
                ctx.error(f"error: set_param: setting {pattern}={value}: {strerror(errno.EACCES)}")
                status = errno.EACCES
                continue
            rel = str(path.relative_to(root))
            if leaf in CLEARABLE:
                label = path.parent.name
                rack.state.setdefault("stats_cleared", {})[f"{label}/{leaf}"] = rack.now
            else:
                server["params"][rel] = value
                path.write_text(value + "\n")
            if not quiet:
                ctx.print(f"{name}={value}")
    return status


def device_list(ctx: Context, rack) -> int:
    state = rack.state
    server = state["servers"][ctx.host]
    if not server["mounts"]:
        return 0
    rows: list[tuple[str, str, str, int]] = []
    mgs = topology.mgs_nids(state)
    mounted = sorted(
        (state["targets"][label] for label in server["mounts"]),
        key=lambda t: (t.get("mounted_at") or 0, t["label"]),
    )
    seen: set[str] = set()

    def add(kind: str, name: str, uuid: str, refs: int) -> None:
        if name not in seen:
            seen.add(name)
            rows.append((kind, name, uuid, refs))

    for target in mounted:
        label = target["label"]
        kind = target["kind"]
        add("osd-ldiskfs", f"{label}-osd", f"{label}-osd_UUID", 4)
        if kind == "MGT":
            add("mgs", "MGS", "MGS", 6)
            continue
        if mgs:
            add("mgc", f"MGC{mgs[0]}", f"{mgs[0]}-mgc_UUID", 4)
        fsname = target["fsname"]
        if kind == "OST":
            add("ost", "OSS", "OSS_uuid", 2)
            add("obdfilter", label, f"{label}_UUID", 6)
            add(
                "lwp",
                f"{fsname}-MDT0000-lwp-OST{target['index']:04x}",
                f"{fsname}-MDT0000-lwp-OST{target['index']:04x}_UUID",
                4,
            )
        else:
            index = f"{target['index']:04x}"
            add("mds", "MDS", "MDS_uuid", 2)
            add("lod", f"{fsname}-MDT{index}-mdtlov", f"{fsname}-MDT{index}-mdtlov_UUID", 3)
            add("mdt", label, f"{label}_UUID", 12)
            add("mdd", f"{fsname}-MDD{index}", f"{fsname}-MDD{index}_UUID", 3)
            add("qmt", f"{fsname}-QMT{index}", f"{fsname}-QMT{index}_UUID", 3)
            for ost in sorted(
                (
                    t
                    for t in state["targets"].values()
                    if t["kind"] == "OST" and t["fsname"] == fsname
                ),
                key=lambda t: t["index"],
            ):
                add(
                    "osp",
                    f"{fsname}-OST{ost['index']:04x}-osc-MDT{index}",
                    f"{fsname}-MDT{index}-mdtlov_UUID",
                    4,
                )
            add(
                "lwp",
                f"{fsname}-MDT0000-lwp-MDT{index}",
                f"{fsname}-MDT0000-lwp-MDT{index}_UUID",
                4,
            )
    for number, (kind, name, uuid, refs) in enumerate(rows):
        ctx.print(f"{number:3d} UP {kind} {name} {uuid} {refs}")
    return 0


def list_nids(ctx: Context, rack, argv: list[str]) -> int:
    server = rack.state["servers"][ctx.host]
    if not server["lnet_nids"]:
        ctx.error("IOC_LIBCFS_GET_NI error 100: Network is down")
        return 1
    if argv and argv[0] == "all":
        ctx.print("0@lo")
    for nid in server["lnet_nids"]:
        ctx.print(nid)
    return 0


def ping(ctx: Context, rack, argv: list[str]) -> int:
    if not argv:
        ctx.error("usage: ping id [timeout (secs)]")
        return 0
    nid = argv[0]
    state = rack.state
    here = ctx.host
    target_host = topology.server_of_nid(state, nid)
    if nid == "0@lo":
        reachable = True
    elif target_host == here:
        # one's own NID answers only while its network interface is up
        reachable = topology.lnet_reachable(state, here)
    else:
        reachable = (
            target_host is not None
            and topology.lnet_reachable(state, here)
            and topology.lnet_reachable(state, target_host)
        )
    if not reachable:
        ctx.error(f"failed to ping {nid}: {strerror(errno.EIO)}")
        return 1
    ctx.print("12345-0@lo")
    for remote in state["servers"][target_host]["lnet_nids"] if target_host else [nid]:
        ctx.print(f"12345-{remote}")
    return 0


def run(ctx: Context, argv: list[str]) -> int:
    if not argv:
        ctx.error("lctl: interactive mode is not available on the virtual rack")
        return 1
    if argv[0] in ("--version", "-V", "version"):
        ctx.print("lctl 2.15.4")
        return 0
    if argv[0] == "--device" and len(argv) > 2:
        argv = argv[2:]
    command, args = argv[0], argv[1:]
    root = host_root(ctx.rack_root, ctx.host)
    with ctx.rack() as rack:
        if command == "get_param":
            return get_param(ctx, root, args)
        if command == "list_param":
            return list_param(ctx, root, args)
        if command == "set_param":
            return set_param(ctx, rack, root, args)
        if command in ("dl", "device_list"):
            return device_list(ctx, rack)
        if command == "list_nids":
            return list_nids(ctx, rack, args)
        if command == "ping":
            return ping(ctx, rack, args)
        if command == "network":
            ctx.error("use lnetctl to configure LNet on Lustre 2.15")
            return 1
    ctx.error(f'lctl: unknown command "{command}"')
    raise CommandExit(1)
