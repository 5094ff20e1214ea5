"""umount: stop a Lustre target (`umount DIR`, `umount DEVICE`, `umount -a -t lustre`).

Messages and exit code 32 for a path that is not mounted are util-linux's.
"""

from __future__ import annotations

import getopt

from simulator import cluster, operations
from simulator.commands import CommandExit, Context


def run(ctx: Context, argv: list[str]) -> int:
    try:
        pairs, rest = getopt.gnu_getopt(argv, "at:flvnrd", ["all", "types=", "force", "lazy"])
    except getopt.GetoptError as problem:
        ctx.error(f"umount: {problem}")
        raise CommandExit(1) from None
    options = dict(pairs)
    every = "-a" in options or "--all" in options
    fstype = options.get("-t", options.get("--types"))
    if not rest and not every:
        ctx.error(
            "Usage:\n umount [-hV]\n umount -a [options]\n umount [options] <source> | <directory>"
        )
        return 1
    status = 0
    with ctx.rack() as rack:
        server = rack.state["servers"][ctx.host]
        if every:
            if fstype in (None, "lustre"):
                # Clients and OSTs first, the MGS last, as umount -a does in reverse order.
                order = sorted(server["mounts"], key=lambda label: label == "MGS")
                for label in order:
                    operations.umount_target(
                        rack.state, ctx.host, server["mounts"][label]["mountpoint"]
                    )
        for what in rest:
            try:
                operations.umount_target(rack.state, ctx.host, what.rstrip("/") or what)
            except operations.OperationError:
                ctx.error(f"umount: {what}: not mounted.")
                status = 32
        cluster.note_manual_change(rack, ctx.host)
        rack.render([ctx.host])
    return status
