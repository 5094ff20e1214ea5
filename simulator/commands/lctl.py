"""lctl: get_param, set_param (-P, -d), list_param, llog_print, dl (device_list), list_nids,
ping, --device, --version.

get_param and list_param search the server's tree like the real lctl (cfs_get_param_paths):
`sys/{fs,kernel/debug}/{lnet,lustre}` then `proc/{fs,sys}/{lnet,lustre}` under the host
root, `.` in a name standing for `/` (NIDs keep their dots), `*`, `?` and `[...]` as in glob,
following links (`osc.<fsname>-OST0000-osc-MDT0000` is `osp.` on an MDS). Output framing is
lustre_param.c's: `name=value` for one-line values, `name=` then the value otherwise; `-n`
prints values only, `-N` names only.

set_param (`name=value` or `name value`) prints `name=value` for each parameter set; writing
`stats`, `md_stats`, `job_stats` or `brw_stats` clears them; the tunables of
`simulator.tunables` (osd-ldiskfs read cache, obdfilter brw_size, ost_io threads, the
MDS's OSP max_rpcs_in_flight, job_cleanup_interval, ldlm lru_size) take a value as the 2.15
kernel does (refused: `error: set_param: setting NAME=VALUE: Invalid argument`, or `Numerical
result out of range`) and keep it until the server reboots or the target remounts; anything
else is read-only ("Permission denied").

`set_param -P name=value` works only where the MGS is mounted (elsewhere, exit 1: `No device
found for name MGS: Invalid argument` / `This command must be run on the MGS.` / `error:
executing set_param: No such device`). Like the real one it does not look the name up: it
records it in the MGS's `params` log (on the MGT; a later setting of the same name replaces
it), and every server that is up sets it on its matching tunables at once; a server that
mounts a target later sets the whole log again, over its defaults and over values set by
hand. `-P -d name` (or `-P name=`) deletes the record: values already set stay until reboot
or remount, as on a real server. `-P name` without a value is refused here (`error: set_param:
setting NAME: no value`, exit 22); the real 2.15 lctl would record it. `lctl [--device MGS]
llog_print params [--start N] [--end N]` prints the log as the MGS does (`- { index: 2, event:
set_param, device: general, param: osc.*.max_rpcs_in_flight, value: 16 }`); no other log is
kept.
"""

from __future__ import annotations

import errno
import getopt
import os
from pathlib import Path

from simulator import procfs, topology, tunables
from simulator.commands import CommandExit, Context, strerror
from simulator.procfs import host_root
from simulator.state import write_atomic
from simulator.tunables import PARAM_DIRS as SEARCH_DIRS
from simulator.tunables import ParamError
from simulator.tunables import param_regex as pattern_regex

CLEARABLE = {"stats", "md_stats", "job_stats", "brw_stats"}


def find_params(root: Path, pattern: str, *, directories: bool = False) -> list[tuple[str, Path]]:
    """(parameter name, file) for every file under the search dirs matching the pattern."""
    regex = pattern_regex(pattern)
    found: dict[str, Path] = {}
    for top in SEARCH_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base, followlinks=True):
            rel_dir = os.path.relpath(dirpath, base)
            names = list(filenames)
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


def _settings(ctx: Context, argv: list[str]) -> tuple[list[tuple[str, str]], int]:
    """`name=value` or `name value` pairs, as jt_lcfg_setparam reads them."""
    pairs: list[tuple[str, str]] = []
    status = 0
    i = 0
    while i < len(argv):
        pattern, equals, value = argv[i].partition("=")
        if not equals:
            i += 1
            if i >= len(argv):
                ctx.error(f"error: set_param: setting {pattern}: no value")
                return pairs, status or errno.EINVAL
            value = argv[i]
        elif not value:
            ctx.error(f"error: set_param: setting {pattern}: no value")
            status = status or errno.EINVAL
            i += 1
            continue
        pairs.append((pattern, value))
        i += 1
    return pairs, status


def _write_value(path: Path, value: str) -> None:
    """A tunable's file takes its new value (where the tree has it: a server that is up)."""
    if path.parent.is_dir():
        write_atomic(path, value + "\n")


def set_param(ctx: Context, rack, root: Path, argv: list[str]) -> int:
    try:
        pairs, settings = getopt.gnu_getopt(argv, "nPdF", [])
    except getopt.GetoptError as problem:
        ctx.error(f"error: set_param: {problem}")
        return 1
    flags = {k for k, _ in pairs}
    if not settings:
        ctx.error("set_param: too few arguments")
        return 1
    if "-P" in flags:
        return set_param_permanent(ctx, rack, settings, delete="-d" in flags)
    settings_pairs, status = _settings(ctx, settings)
    server = rack.state["servers"][ctx.host]
    table = tunables.tunables(rack.state, ctx.host)
    files = tunables.tunable_files(table)
    for pattern, value in settings_pairs:
        matches = find_params(root, pattern)
        if not matches:
            ctx.error(
                f"error: set_param: param_path '{pattern.replace('.', '/')}': "
                "No such file or directory"
            )
            status = status or errno.ENOENT
            continue
        for name, path in matches:
            own = files.get(path.relative_to(root).as_posix())
            try:
                if path.name in CLEARABLE:
                    label = path.parent.name
                    rack.state.setdefault("stats_cleared", {})[f"{label}/{path.name}"] = rack.now
                elif own is None:
                    raise ParamError(errno.EACCES)
                else:
                    _write_value(root / own, tunables.set_tunable(server, table, own, value))
            except ParamError as problem:
                ctx.error(f"error: set_param: setting {pattern}={value}: {strerror(problem.errno)}")
                status = status or problem.errno
                continue
            if "-n" not in flags:
                ctx.print(f"{name}={value}")
    return status


def _mgs_here(state: dict, host: str) -> dict | None:
    mgt = state["targets"].get("MGS")
    return mgt if mgt and mgt.get("mounted_on") == host else None


def _no_mgs(ctx: Context) -> None:
    """What lctl's parse_devname says when this node has no MGS device."""
    ctx.error("No device found for name MGS: Invalid argument")


def _llog_device(setting: str, fsnames: list[str]) -> str:
    """The record's device, as mgs_set_param2 picks it: a filesystem whose name appears after
    the first `.` of `name=value` (before any `=`), else "general"."""
    head = min((setting.find(c) for c in ".=" if c in setting), default=len(setting))
    if head == 0 or setting[head : head + 1] != ".":
        return "general"
    rest = setting[head + 1 :]
    return next((fsname for fsname in fsnames if fsname in rest), "general")


def set_param_permanent(ctx: Context, rack, settings: list[str], *, delete: bool) -> int:
    """`set_param -P [-d]`: the MGS's params log, then every running server. Like the real
    lctl, the exit status is that of the last setting."""
    state = rack.state
    fsnames = sorted({t["fsname"] for t in state["targets"].values() if t.get("fsname")})
    status = 0
    for setting in settings:
        mgt = _mgs_here(state, ctx.host)
        if mgt is None:
            _no_mgs(ctx)
            ctx.error("This command must be run on the MGS.")
            ctx.error(f"error: executing set_param: {strerror(errno.ENODEV)}")
            status = 1
            continue
        name, equals, value = setting.partition("=")
        if not equals and not delete:
            ctx.error(f"error: set_param: setting {setting}: no value")
            status = errno.EINVAL
            continue
        status = 0
        value = "" if delete else value  # `name=` deletes as well (mgs_param_empty)
        device = _llog_device(f"{name}={value}", fsnames)
        log = [
            record
            for record in mgt.get("params_log", [])
            if (record["device"], record["param"]) != (device, name)
        ]
        mgt["params_log"] = log
        if not value:
            continue  # values already set stay until the server reboots or remounts
        last = mgt.get("params_log_last", 0)  # a start marker, the record, an end marker
        log.append({"index": last + 2, "device": device, "param": name, "value": value})
        mgt["params_log_last"] = last + 3
        # The MGS revokes its config lock: each server reads the new record within seconds.
        for host, server in state["servers"].items():
            if server["state"] == "up":
                root = host_root(ctx.rack_root, host)
                for rel, shown in tunables.apply_setting(state, host, name, value).items():
                    _write_value(root / rel, shown)
    return status


def llog_print(ctx: Context, rack, argv: list[str], device: str | None) -> int:
    """The MGS's `params` log, one YAML flow mapping per live record (class_config_yaml_output)."""
    try:
        pairs, args = getopt.gnu_getopt(
            argv, "c:e:hrs:", ["catalog=", "end=", "help", "raw", "start="]
        )
    except getopt.GetoptError as problem:
        ctx.error(f"llog_print: {problem}")
        return 1
    options = dict(pairs)
    catalog = options.get("-c") or options.get("--catalog")
    bounds = [
        options.get("-s") or options.get("--start"),
        options.get("-e") or options.get("--end"),
    ]
    if catalog is None and args:
        catalog, args = args[0], args[1:]
    for i, positional in enumerate(args[:2]):
        bounds[i] = bounds[i] or positional
    if catalog is None or "-h" in options or "--help" in options:
        ctx.error(
            "print all effective log records by default, or within given range.\n"
            "With --raw option skipped records are printed as well.\n"
            "usage: llog_print <logname|FID> [--start <index>] [--end <index>j]\n"
            "\t\t    [--raw]"
        )
        return 4
    try:
        start = int(bounds[0] or "1", 0)
        end = int(bounds[1] or "-1", 0)
    except ValueError:
        ctx.error(f"llog_print: bad start/end value '{bounds[0] or bounds[1]}'")
        return 4
    mgt = _mgs_here(rack.state, ctx.host)
    if mgt is None and device in (None, "MGS"):
        _no_mgs(ctx)
        return 1
    if mgt is None or device not in (None, "MGS") or catalog != tunables.PARAMS_LOG:
        ctx.error(f"{catalog}: OBD_IOC_LLOG_PRINT failed: {strerror(errno.ENOENT)}")
        return errno.ENOENT
    for record in tunables.config_log(rack.state):
        if record["index"] >= start and (end < 0 or record["index"] <= end):
            ctx.print(
                f"- {{ index: {record['index']}, event: set_param, device: {record['device']}, "
                f"param: {record['param']}, value: {record['value']} }}"
            )
    return 0


def devices(state: dict, host: str) -> list[tuple[str, str, str, int]]:
    """The server's OBD devices in `lctl dl` order: (type, name, uuid, refcount)."""
    server = state["servers"][host]
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
            for osp in tunables.osp_devices(state, target):
                add("osp", osp, f"{fsname}-MDT{index}-mdtlov_UUID", 4)
            add(
                "lwp",
                f"{fsname}-MDT0000-lwp-MDT{index}",
                f"{fsname}-MDT0000-lwp-MDT{index}_UUID",
                4,
            )
    return rows


def device_list(ctx: Context, rack) -> int:
    for number, (kind, name, uuid, refs) in enumerate(devices(rack.state, ctx.host)):
        ctx.print(f"{number:3d} UP {kind} {name} {uuid} {refs}")
    return 0


def resolve_device(state: dict, host: str, name: str) -> str | None:
    """`--device NAME|$NAME|%UUID|NUMBER` as parse_devname resolves it: the device's name."""
    rows = devices(state, host)
    wanted = name[1:] if name[:1] in ("$", "%") else name
    for _kind, device, uuid, _refs in rows:
        if wanted in (device, uuid):
            return device
    if name[:1].isdigit():
        try:
            number = int(name, 0)
        except ValueError:  # "08", "1x": not a number parse_devname takes
            return None
        return rows[number][1] if number < len(rows) else name
    return None


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
    device = None
    if argv[0] == "--device":
        if len(argv) < 3:
            ctx.error("run <command> after connecting to device <devno>")
            ctx.error("--device <devno> <command [args ...]>")
            return 4
        device, argv = argv[1], argv[2:]
    command, args = argv[0], argv[1:]
    root = host_root(ctx.rack_root, ctx.host)
    with ctx.rack() as rack:
        if device is not None:
            resolved = resolve_device(rack.state, ctx.host, device)
            if resolved is None:
                wanted = device[1:] if device[:1] in ("$", "%") else device
                ctx.error(f"No device found for name {wanted}: {strerror(errno.EINVAL)}")
                return 1
            device = resolved
        if command in ("get_param", "list_param", "set_param"):
            procfs.refresh_params(ctx.rack_root, rack.state, ctx.host)
        if command == "get_param":
            return get_param(ctx, root, args)
        if command == "list_param":
            return list_param(ctx, root, args)
        if command == "set_param":
            return set_param(ctx, rack, root, args)
        if command == "llog_print":
            return llog_print(ctx, rack, args, device)
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
