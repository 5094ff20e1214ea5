"""mount / mount.lustre: start a Lustre target on this server, or list mounts.

`mount -t lustre [-o opts] DEVICE DIR` and `mount.lustre DEVICE DIR` start the target formatted
on DEVICE (it must be visible here through a SAS path, formatted, not held by the partner
server, and for an MDT/OST the MGS must answer). Messages and exit codes (the errno) are
mount.lustre's (lustre/utils/mount_lustre.c). `mount` and `mount -t lustre` list mounts as
util-linux prints them. Other filesystem types are not simulated and fail with exit 32.
"""

from __future__ import annotations

import errno
import getopt

from simulator import cluster, operations, procfs
from simulator.commands import CommandExit, Context, strerror

HINTS = {
    errno.EBUSY: "Is the backend filesystem mounted?\n Check /etc/mtab and /proc/mounts",
    errno.ENODEV: "Are the lustre modules loaded?\n Check /etc/modprobe.conf and /proc/filesystems",
    errno.EIO: "Is the MGS running?",
}


def list_mounts(ctx: Context, lustre_only: bool) -> int:
    with ctx.rack() as rack:
        state = rack.state
        server = state["servers"][ctx.host]
        if not lustre_only:
            ctx.print("/dev/sda2 on / type xfs (rw,relatime,attr2,inode64,noquota)")
            ctx.print("proc on /proc type proc (rw,nosuid,nodev,noexec,relatime)")
            ctx.print("sysfs on /sys type sysfs (rw,nosuid,nodev,noexec,relatime)")
        for label in sorted(server["mounts"]):
            target = state["targets"][label]
            options = procfs.mount_options(state, target)
            ctx.print(f"{target['device']} on {target['mountpoint']} type lustre ({options})")
    return 0


def run(ctx: Context, argv: list[str]) -> int:
    helper = ctx.name == "mount.lustre"
    prog = "mount.lustre"
    try:
        pairs, rest = getopt.gnu_getopt(argv, "t:o:vfnrwalh", ["types=", "options=", "verbose"])
    except getopt.GetoptError as problem:
        ctx.error(f"mount: {problem}")
        raise CommandExit(1) from None
    fstype = "lustre" if helper else None
    for key, value in pairs:
        if key in ("-t", "--types"):
            fstype = value
        elif key == "-h":
            ctx.print(
                "Usage:\n mount [-lhV]\n mount -a [options]\n mount [options] <source> <directory>"
            )
            return 0
    if not rest:
        return list_mounts(ctx, lustre_only=fstype == "lustre")
    if fstype != "lustre":
        ctx.error(
            f"mount: the virtual rack only mounts lustre targets (-t lustre), not "
            f"{fstype or 'auto'}"
        )
        return 32
    if len(rest) != 2:
        ctx.error(f"usage: {prog} [-fhnvV] [-o <mntopt>] <device> <mountpt>")
        return 1
    device, mountpoint = rest
    with ctx.rack() as rack:
        try:
            target = operations.target_on_device(rack.state, ctx.host, device)
        except operations.OperationError as problem:
            if problem.errno == errno.ENOENT:
                ctx.error(f"{prog}: {device} does not exist.")
                return errno.ENOENT
            ctx.error(f"{prog}: {problem}")
            return problem.errno
        try:
            operations.mount_target(rack.state, ctx.host, device, mountpoint, rack.now)
        except operations.OperationError as problem:
            if problem.errno == errno.EEXIST:
                ctx.error(
                    f"{prog}: according to /etc/mtab {device} is already mounted on "
                    f"{target['mountpoint']}"
                )
                return errno.EEXIST
            ctx.error(f"{prog}: mount {device} at {mountpoint} failed: {strerror(problem.errno)}")
            if problem.errno in HINTS:
                ctx.error(HINTS[problem.errno])
            return problem.errno
        cluster.note_manual_change(rack, ctx.host)
        rack.render([ctx.host])
    return 0
