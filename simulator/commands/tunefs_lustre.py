"""tunefs.lustre: show or change the Lustre configuration written on a target.

Reads the target formatted on the device, prints "Read previous values" and "Permanent disk
data" like lustre/utils/mkfs_lustre.c built as tunefs, and applies --param, --mgsnode,
--servicenode/--failnode (replacing the old ones with --erase-params), --writeconf.
--dryrun prints without writing. A mounted target is refused.
"""

from __future__ import annotations

import errno

from simulator import operations
from simulator.commands import CommandExit, Context
from simulator.commands.mkfs_lustre import (
    FLAG_MDT,
    FLAG_MGS,
    FLAG_NO_PRIMNODE,
    FLAG_OST,
    FLAG_WRITECONF,
    MOUNT_OPTIONS,
    disk_data,
    exiting,
    fatal,
    params_text,
    parse,
)


def run(ctx: Context, argv: list[str]) -> int:
    prog = "tunefs.lustre"
    writeconf = "--writeconf" in argv
    erase = "--erase-params" in argv
    options = parse(ctx, prog, argv, tunefs=True)
    with ctx.rack() as rack:
        state = rack.state
        ctx.print("checking for existing Lustre data: ", end="")
        try:
            target = operations.target_on_device(state, ctx.host, options.device)
        except operations.OperationError:
            ctx.print("not found")
            fatal(ctx, prog, f"Device {options.device} has not been formatted with mkfs.lustre")
            raise exiting(ctx, prog, errno.ENODEV) from None
        ctx.print("found")
        ctx.print("Reading CONFIGS/mountdata")
        kind = target["kind"]
        flags = {"OST": FLAG_OST, "MDT": FLAG_MDT, "MGT": FLAG_MGS}[kind]
        if target["servicenodes"]:
            flags |= FLAG_NO_PRIMNODE
        index = None if kind == "MGT" else target["index"]
        fsname = target["fsname"] or "lustre"
        before = params_text(target["mgsnodes"], target["servicenodes"], target["params"])
        ctx.print(
            disk_data(
                "Read previous values",
                svname=target["label"],
                index=index,
                fsname=fsname,
                flags=flags,
                mount_opts=MOUNT_OPTIONS[kind],
                params=before,
            ),
            end="",
        )
        mgsnodes = [] if erase else list(target["mgsnodes"])
        servicenodes = [] if erase else list(target["servicenodes"])
        params = {} if erase else dict(target["params"])
        mgsnodes += [n for n in options.mgsnodes if n not in mgsnodes]
        servicenodes += [
            n for n in options.servicenodes + options.failnodes if n not in servicenodes
        ]
        params.update(options.params)
        if writeconf:
            flags |= FLAG_WRITECONF
        if servicenodes:
            flags |= FLAG_NO_PRIMNODE
        after = params_text(mgsnodes, servicenodes, params)
        ctx.print(
            disk_data(
                "Permanent disk data",
                svname=target["label"],
                index=index,
                fsname=fsname,
                flags=flags,
                mount_opts=MOUNT_OPTIONS[kind],
                params=after,
            ),
            end="",
        )
        if options.dryrun:
            ctx.print("exiting before disk write.")
            return 0
        if target.get("mounted_on"):
            ctx.error(f"{options.device}: is currently mounted, exiting without any change")
            raise CommandExit(errno.EEXIST)
        target["mgsnodes"] = mgsnodes
        target["servicenodes"] = servicenodes
        target["params"] = params
        if writeconf:
            target["writeconf"] = True
        ctx.print("Writing CONFIGS/mountdata")
    return 0
