"""mkfs.lustre: format a volume as a Lustre target (ldiskfs backend).

Options and messages follow lustre/utils/mkfs_lustre.c (2.15): --mgs, --mdt, --ost,
--fsname, --index (decimal or 0x hex), --mgsnode and --servicenode/--failnode (NIDs,
repeatable, `,` between NIDs of one node), --param, --reformat, --dryrun, --mkfsoptions,
--mountfsoptions, --backfstype=ldiskfs, --verbose, --quiet. Errors end with
`mkfs.lustre: exiting with N (strerror)` and exit code N.
"""

from __future__ import annotations

import errno
import getopt
import re

from simulator import operations
from simulator.commands import CommandExit, Context, strerror

LONG_OPTIONS = [
    "mgs",
    "mdt",
    "ost",
    "nomgs",
    "fsname=",
    "index=",
    "mgsnode=",
    "servicenode=",
    "failnode=",
    "param=",
    "reformat",
    "replace",
    "dryrun",
    "verbose",
    "quiet",
    "mkfsoptions=",
    "mountfsoptions=",
    "backfstype=",
    "device-size=",
    "stripe-count-hint=",
    "network=",
    "comment=",
    "help",
    "version",
    "backfs-mount-opts=",
    "force-nohostid",
]
SHORT_OPTIONS = "hvqV"
NID_RE = re.compile(r"^(\d{1,3}(\.\d{1,3}){3}@(o2ib|tcp)\d*|0@lo)$")
FSNAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,8}$")

FLAG_MDT, FLAG_OST, FLAG_MGS = 0x1, 0x2, 0x4
FLAG_NEED_INDEX, FLAG_VIRGIN, FLAG_UPDATE, FLAG_WRITECONF = 0x10, 0x20, 0x40, 0x100
FLAG_NO_PRIMNODE = 0x1000

MKFS_OPTIONS = {
    "OST": "-J size=1024 -I 512 -i 1048576 -q -O extents,uninit_bg,dir_nlink,quota,project,"
    'huge_file,^fast_commit,flex_bg -G 256 -E resize="4290772992",'
    'lazy_journal_init="0",lazy_itable_init="0" -F',
    "MDT": "-J size=4096 -I 1024 -i 2560 -q -O dirdata,uninit_bg,^extents,dir_nlink,quota,"
    "project,huge_file,ea_inode,large_dir,^fast_commit,flex_bg "
    '-E lazy_journal_init="0",lazy_itable_init="0" -F',
    "MGT": "-q -O uninit_bg,^extents,dir_nlink,quota,project,huge_file,^fast_commit,flex_bg "
    '-E lazy_journal_init="0",lazy_itable_init="0" -F',
}
MOUNT_OPTIONS = {
    "OST": "errors=remount-ro",
    "MDT": "user_xattr,errors=remount-ro",
    "MGT": "user_xattr,errors=remount-ro",
}

USAGE = (
    "usage: {prog} <target type> [--backfstype=ldiskfs] --fsname=<filesystem name>\n"
    "\t--index=<target index> [options] <device>\n"
    "\t<device>:block device or file (e.g /dev/sda or /tmp/ost1)\n"
    "\n"
    "\ttarget types:\n"
    "\t\t--mgs: configuration management service\n"
    "\t\t--nomgs: turn off MGS service on this MDT\n"
    "\t\t--mdt: metadata storage, mutually exclusive with ost\n"
    "\t\t--ost: object storage, mutually exclusive with mdt, mgs\n"
    "\toptions (in order of popularity):\n"
    "\t\t--index=#N: numerical target index (0..N)\n"
    "\t\t--fsname=<8_char_filesystem_name>: fs targets belong to\n"
    "\t\t--mgsnode=<nid>[,<...>]: NID(s) of remote MGS\n"
    "\t\t--failnode=<nid>[,<...>]: NID(s) of backup failover node\n"
    "\t\t--servicenode=<nid>[,<...>]: NID(s) of service partners\n"
    "\t\t--param <key>=<value>: set a permanent parameter\n"
    "\t\t--reformat: overwrite an existing disk\n"
    "\t\t--dryrun: report what we would do; don't write to disk\n"
    "\t\t--verbose: e.g. show mkfs progress\n"
    "\t\t--quiet\n"
)


class Options:
    def __init__(self) -> None:
        self.kind: set[str] = set()
        self.fsname: str | None = None
        self.index: int | None = None
        self.mgsnodes: list[str] = []
        self.servicenodes: list[str] = []
        self.failnodes: list[str] = []
        self.params: dict[str, str] = {}
        self.reformat = False
        self.dryrun = False
        self.verbose = 0
        self.mkfsoptions = ""
        self.mountfsoptions: str | None = None
        self.device: str | None = None


def fatal(ctx: Context, prog: str, message: str) -> None:
    ctx.error(f"\n{prog} FATAL: {message}")


def exiting(ctx: Context, prog: str, code: int) -> CommandExit:
    ctx.error(f"{prog}: exiting with {code} ({strerror(code)})")
    return CommandExit(code)


def convert_nids(ctx: Context, prog: str, value: str) -> list[str]:
    nids = [n for n in re.split(r"[,:]", value) if n]
    for nid in nids:
        if not NID_RE.match(nid):
            ctx.error(f"{prog}: Cannot resolve hostname '{nid}'.")
            raise exiting(ctx, prog, errno.EINVAL)
    return nids


def parse(ctx: Context, prog: str, argv: list[str], tunefs: bool = False) -> Options:
    options = Options()
    long_options = LONG_OPTIONS + (
        ["writeconf", "erase-params", "erase-param=", "nolocallogs", "quota", "rename="]
        if tunefs
        else []
    )
    try:
        pairs, rest = getopt.gnu_getopt(argv, SHORT_OPTIONS, long_options)
    except getopt.GetoptError as problem:
        opt = problem.opt if problem.opt else "?"
        dashes = "--" if len(opt) > 1 else "-"
        ctx.error(f"{prog}: unrecognized option '{dashes}{opt}'")
        ctx.error("Unknown option '?'")
        raise exiting(ctx, prog, errno.EINVAL) from None
    for key, value in pairs:
        if key in ("-h", "--help"):
            ctx.print(USAGE.format(prog=prog), end="")
            raise CommandExit(1)
        if key in ("-V", "--version"):
            ctx.print(f"{prog} 2.15.4")
            raise CommandExit(0)
        if key in ("--mgs", "--mdt", "--ost"):
            options.kind.add(key[2:].upper())
        elif key == "--fsname":
            if not 1 <= len(value) <= 8:
                ctx.error(f"{prog}: filesystem name must be 1-8 chars")
                raise exiting(ctx, prog, 1)
            bad = next((c for c in value if not (c.isalnum() or c in "_-")), None)
            if bad:
                ctx.error(f"{prog}: char '{bad}' not allowed in filesystem name")
                raise exiting(ctx, prog, 1)
            options.fsname = value
        elif key == "--index":
            try:
                options.index = int(value, 16 if value.startswith("0x") else 10)
            except ValueError:
                ctx.error(
                    f"{prog}: wrong index {value}. Target index must be decimal or hexadecimal."
                )
                raise exiting(ctx, prog, 1) from None
            if not 0 <= options.index < 0xFFFF:
                ctx.error(
                    f"{prog}: wrong index {options.index}. Target index must be less than 65535."
                )
                raise exiting(ctx, prog, 1)
        elif key == "--mgsnode":
            options.mgsnodes += convert_nids(ctx, prog, value)
        elif key in ("--servicenode", "--failnode"):
            if (key == "--servicenode" and options.failnodes) or (
                key == "--failnode" and options.servicenodes
            ):
                other = "failnode" if key == "--servicenode" else "servicenode"
                ctx.error(f"{prog}: {key[2:]} cannot use with --{other}")
                raise exiting(ctx, prog, 1)
            nids = convert_nids(ctx, prog, value)
            (options.servicenodes if key == "--servicenode" else options.failnodes).extend(nids)
        elif key == "--param":
            if "=" not in value:
                ctx.error(f"{prog}: param must be in the form key=value: {value}")
                raise exiting(ctx, prog, errno.EINVAL)
            name, _, setting = value.partition("=")
            options.params[name] = setting
        elif key == "--reformat":
            options.reformat = True
        elif key == "--dryrun":
            options.dryrun = True
        elif key in ("-v", "--verbose"):
            options.verbose += 1
        elif key in ("-q", "--quiet"):
            options.verbose = -1
        elif key == "--mkfsoptions":
            options.mkfsoptions = value
        elif key == "--mountfsoptions":
            options.mountfsoptions = value
        elif key == "--backfstype" and value != "ldiskfs":
            fatal(
                ctx,
                prog,
                f"backing filesystem type {value} is not supported on this rack (ldiskfs only)",
            )
            raise exiting(ctx, prog, errno.EINVAL)
    if len(rest) != 1:
        fatal(ctx, prog, "Bad arguments")
        ctx.error(USAGE.format(prog=prog), end="")
        raise exiting(ctx, prog, errno.EINVAL)
    options.device = rest[0]
    return options


def target_kind(options: Options) -> str | None:
    if "OST" in options.kind:
        return "OST"
    if "MDT" in options.kind:
        return "MDT"
    if "MGS" in options.kind:
        return "MGT"
    return None


def flags_text(flags: int) -> str:
    words = [
        ("MDT ", flags & FLAG_MDT),
        ("OST ", flags & FLAG_OST),
        ("MGS ", flags & FLAG_MGS),
        ("needs_index ", flags & FLAG_NEED_INDEX),
        ("first_time ", flags & FLAG_VIRGIN),
        ("update ", flags & FLAG_UPDATE),
        ("writeconf ", flags & FLAG_WRITECONF),
        ("no_primnode ", flags & FLAG_NO_PRIMNODE),
    ]
    return "".join(word for word, on in words if on)


def disk_data(
    title: str,
    *,
    svname: str,
    index: int | None,
    fsname: str,
    flags: int,
    mount_opts: str,
    params: str,
) -> str:
    index_text = "unassigned" if index is None else str(index)
    return (
        f"\n   {title}:\n"
        f"Target:     {svname}\n"
        f"Index:      {index_text}\n"
        f"Lustre FS:  {fsname}\n"
        f"Mount type: ldiskfs\n"
        f"Flags:      {flags:#x}\n"
        f"              ({flags_text(flags)})\n"
        f"Persistent mount opts: {mount_opts}\n"
        f"Parameters:{params}\n"
        "\n"
    )


def params_text(mgsnodes: list[str], servicenodes: list[str], params: dict[str, str]) -> str:
    text = ""
    if mgsnodes:
        text += " mgsnode=" + ":".join(mgsnodes)
    if servicenodes:
        text += " failover.node=" + ":".join(servicenodes)
    for name, value in params.items():
        text += f" {name}={value}"
    return text


def run(ctx: Context, argv: list[str]) -> int:
    prog = "mkfs.lustre"
    options = parse(ctx, prog, argv)
    kind = target_kind(options)
    if kind is None:
        fatal(ctx, prog, "must set target type: MDT,OST,MGS")
        raise exiting(ctx, prog, errno.EINVAL)
    if "OST" in options.kind and options.kind & {"MDT", "MGS"}:
        fatal(ctx, prog, "OST type is exclusive with MDT,MGS")
        raise exiting(ctx, prog, errno.EINVAL)
    if kind == "MGT" and options.index is not None:
        ctx.error(f"{prog}: '--index' only valid for MDT,OST")
        raise exiting(ctx, prog, errno.EINVAL)
    if kind == "OST" and options.index is None:
        ctx.error(
            f"warning: {options.device}: for Lustre 2.4 and later, the target index must "
            "be specified with --index"
        )
    if kind == "MDT" and options.index is None:
        options.index = 0
    if kind != "MGT" and not options.mgsnodes:
        fatal(
            ctx,
            prog,
            "Must specify --mgs or --mgsnode" if kind == "MDT" else "Must specify --mgsnode",
        )
        raise exiting(ctx, prog, errno.EINVAL)
    if kind in ("OST", "MDT") and not options.fsname:
        fatal(ctx, prog, "Must specify --fsname for MDT/OST device")
        raise exiting(ctx, prog, errno.EINVAL)
    if kind == "OST" and options.index is None:
        fatal(ctx, prog, "the target index must be specified with --index")
        raise exiting(ctx, prog, errno.EINVAL)

    flags = {"OST": FLAG_OST, "MDT": FLAG_MDT, "MGT": FLAG_MGS}[kind]
    flags |= FLAG_VIRGIN | FLAG_UPDATE
    if options.servicenodes:
        flags |= FLAG_NO_PRIMNODE
    fsname = options.fsname or "lustre"
    if kind == "MGT":
        svname = "MGS"
    else:
        svname = f"{fsname}:{kind}{options.index:04x}"
    mount_opts = options.mountfsoptions or MOUNT_OPTIONS[kind]
    service = options.servicenodes or options.failnodes
    if options.verbose >= 0:
        ctx.print(
            disk_data(
                "Permanent disk data",
                svname=svname,
                index=options.index if kind != "MGT" else None,
                fsname=fsname,
                flags=flags,
                mount_opts=mount_opts,
                params=params_text(options.mgsnodes, service, options.params),
            ),
            end="",
        )
    with ctx.rack() as rack:
        state = rack.state
        try:
            volume_name = operations.device_volume(state, ctx.host, options.device)
        except operations.OperationError:
            fatal(ctx, prog, f"Unable to open {options.device}: No such file or directory")
            raise exiting(ctx, prog, errno.ENOENT) from None
        if options.dryrun:
            ctx.print("exiting before disk write.")
            return 0
        existing = next((t for t in state["targets"].values() if t["volume"] == volume_name), None)
        if existing and existing.get("mounted_on"):
            ctx.error(f"{options.device}: is currently mounted, exiting without any change")
            raise CommandExit(errno.EEXIST)
        if existing and not options.reformat:
            fatal(
                ctx,
                prog,
                f"Device {options.device} was previously formatted for lustre. "
                "Use --reformat to reformat it, or tunefs.lustre to modify.",
            )
            raise exiting(ctx, prog, 1)
        found = operations.find_volume(state, volume_name)
        size_kib = found[1]["capacity_bytes"] // 1024 if found else 0
        try:
            operations.format_target(
                state,
                ctx.host,
                options.device,
                kind=kind,
                fsname=options.fsname,
                index=options.index,
                mgsnodes=options.mgsnodes,
                servicenodes=service,
                reformat=options.reformat,
                now=rack.now,
                params=options.params,
            )
        except operations.OperationError as problem:
            fatal(ctx, prog, str(problem))
            raise exiting(ctx, prog, problem.errno) from None
        mkfsopts = MKFS_OPTIONS[kind] + (f" {options.mkfsoptions}" if options.mkfsoptions else "")
        if options.verbose >= 0:
            ctx.print(f"device size = {size_kib // 1024}MB")
            ctx.print(f"formatting backing filesystem ldiskfs on {options.device}")
            ctx.print(f"\ttarget name   {svname}")
            ctx.print(f"\tkilobytes     {size_kib}")
            ctx.print(f"\toptions        {mkfsopts}")
            ctx.print(
                f"mkfs_cmd = mke2fs -j -b 4096 -L {svname}  {mkfsopts} {options.device} {size_kib}k"
            )
            ctx.print("Writing CONFIGS/mountdata")
    return 0
