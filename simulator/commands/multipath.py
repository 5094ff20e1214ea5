"""multipath: the device-mapper multipath maps of a virtual server, as `multipath -ll` lists them.

`multipath -ll [map]` (and `-l`, which leaves out the path checker's state) prints, for each
volume mapped to the server on the arrays cabled to it, one map named after the volume (the
`alias` the playbooks give it), with one path group per RAID controller: the owning
controller's group first (ALUA active/optimized, prio 50), the partner's after it (prio 10).
Each group holds the server's SAS path to that controller:

    scratch-OST0000 (3600a0980a1b2c3d4e5f60718293a4b5c) dm-2 NETAPP,INF-01-00
    size=29T features='3 queue_if_no_path pg_init_retries 50' hwhandler='1 alua' wp=rw
    |-+- policy='service-time 0' prio=50 status=active
    | `- 1:0:0:0 sdb 8:16  active ready running
    `-+- policy='service-time 0' prio=10 status=enabled
      `- 2:0:0:0 sdc 8:32  active ready running

A pulled SAS link, or a failed controller, shows its paths `failed faulty running`; the map
stays while at least one path works, and also while every path is down and I/O is queued
(`queue_if_no_path`) until Pacemaker fences the server. The SCSI host number is the HBA port
(1 + 2 x the array's place + 0 for controller A, 1 for B); the LUN is the volume's place in
the array. A map that does not exist prints nothing (exit 0, as multipath does).
"""

from __future__ import annotations

import hashlib

from simulator import topology
from simulator.commands import Context

# Block majors of SCSI disks, 16 disks each (Documentation/admin-guide/devices.txt).
SD_MAJORS = (8, 65, 66, 67, 68, 69, 70, 71, 128, 129, 130, 131, 132, 133, 134, 135)
USAGE = "multipath: usage: multipath -ll|-l [map]"


def _disk_name(index: int) -> str:
    """sda, ..., sdz, sdaa, ...: the kernel's names of SCSI disks."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return f"sd{letters}"


def _size(capacity_bytes: int) -> str:
    value = float(capacity_bytes)
    for unit in ("", "K", "M", "G", "T", "P"):
        if value < 1024 or unit == "P":
            return f"{value:.1f}{unit}" if value < 10 and unit else f"{value:.0f}{unit}"
        value /= 1024
    return f"{value:.0f}P"


def _wwid(array: str, volume: str) -> str:
    digest = hashlib.sha1(f"{array}/{volume}".encode()).hexdigest()
    return "3600a0980" + digest[:24]


def maps(state: dict, host: str) -> list[str]:
    """The text of `multipath -ll`, one block per map."""
    server = state["servers"][host]
    cabled = sorted(server["sas"])
    blocks = []
    disk = 1  # sda is the system disk
    for number, (array, name) in enumerate(topology.mapped_volumes(state, host)):
        volume = array["volumes"][name]
        place = cabled.index(array["name"])
        lun = sorted(array["volumes"]).index(name)
        owner = volume["owner"]
        order = [owner, "B" if owner == "A" else "A"]
        paths = []
        for controller in order:
            up = server["sas"][array["name"]][controller] and (
                array["controllers"][controller] == "optimal"
            )
            scsi_host = 1 + 2 * place + (0 if controller == "A" else 1)
            major = SD_MAJORS[disk // 16 % len(SD_MAJORS)]
            paths.append((controller, up, f"{scsi_host}:0:0:{lun}", _disk_name(disk), major, disk))
            disk += 1
        lines = [
            f"{name} ({_wwid(array['name'], name)}) dm-{number + 2} NETAPP,INF-01-00",
            f"size={_size(volume['capacity_bytes'])} features='3 queue_if_no_path "
            "pg_init_retries 50' hwhandler='1 alua' wp=rw",
        ]
        active_group = next((i for i, path in enumerate(paths) if path[1]), None)
        for i, (controller, up, hctl, disk_name, major, index) in enumerate(paths):
            last = i == len(paths) - 1
            prio = 50 if controller == owner else 10
            status = "active" if i == active_group else "enabled"
            lines.append(
                f"{'`' if last else '|'}-+- policy='service-time 0' prio={prio} status={status}"
            )
            state_words = "active ready running" if up else "failed faulty running"
            device = f"{major}:{index % 16 * 16}"
            lines.append(f"{' ' if last else '|'} `- {hctl} {disk_name} {device:<6} {state_words}")
        blocks.append("\n".join(lines))
    return blocks


def run(ctx: Context, argv: list[str]) -> int:
    if not argv or argv[0] not in ("-ll", "-l"):
        ctx.error(USAGE)
        return 1
    wanted = argv[1] if len(argv) > 1 else None
    with ctx.rack(read_only=True) as rack:
        for block in maps(rack.state, ctx.host):
            if wanted is None or block.split(" ", 1)[0] == wanted:
                if argv[0] == "-l":
                    block = block.replace(" ready running", " undef running").replace(
                        " faulty running", " undef running"
                    )
                ctx.print(block)
    return 0
