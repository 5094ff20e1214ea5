"""Points of the array collector (``sensors.santricity``) and of the servers beside them, written
to the real test InfluxDB for the inventory of ``rack_inventory``: volumes answering at the
array, OSTs' service times at their servers, the servers' CPU, and Major Event Log entries."""

from __future__ import annotations

import time

from portal import influxdb as influx
from portal.inventory.models import Drive, Target
from sensors.lineproto import line, series

COLLECTOR = "ostara-mgmt"  # the management server that runs the array collector


def slowness_lines(
    *,
    array_ms: dict[str, float],
    service_ms: dict[str, float],
    cpu_percent: dict[str, float],
    now: float,
    default_array_ms: float = 2.0,
    default_service_ms: float = 3.0,
    seconds: int = 240,
    traffic: dict[str, int] | None = None,
) -> list[str]:
    """``seconds`` of every OST's traffic (100 reads and 100 writes a second) on its primary
    server, with its service time (``service_ms`` by label, else the default); each volume of
    the arrays answering in ``array_ms`` by volume group (else the default), once a minute;
    each server's CPU busy ``cpu_percent`` (else 10 %). ``traffic`` multiplies an OST's
    operations by label."""
    lines = []
    targets = Target.objects.filter(kind="OST").select_related(
        "volume_group__array", "primary_server"
    )
    start = int(now) - seconds
    servers = set()
    for target in targets:
        fs, name = target.label.split("-", 1)
        server = target.primary_server.hostname
        servers.add(server)
        usecs = service_ms.get(target.label, default_service_ms) * 1000
        for step in range(0, seconds + 1, 10):
            calls = 1000 * step * (traffic or {}).get(target.label, 1)
            fields = {
                "read_calls": calls,
                "write_calls": calls,
                "read_usecs": int(calls * usecs),
                "write_usecs": int(calls * usecs),
                "read_bytes": calls * 2**20,
                "write_bytes": calls * 2**20,
            }
            tags = {"fs": fs, "target": name, "server": server}
            lines.append(line(series("ost", tags), fields, (start + step) * 10**9))
        group = target.volume_group
        ms = array_ms.get(group.name, default_array_ms)
        for step in range(0, seconds + 1, 60):
            tags = {
                "server": COLLECTOR,
                "array": group.array.name,
                "volume": target.label,
                "volume_group": group.name,
            }
            fields = {
                "read_iops": 100.0,
                "write_iops": 100.0,
                "read_mbps": 100.0,
                "write_mbps": 100.0,
                "read_latency_ms": ms,
                "write_latency_ms": ms,
            }
            lines.append(line(series("array_volume", tags), fields, (start + step) * 10**9))
    for server in servers:
        busy = cpu_percent.get(server, 10.0)
        for step in (0, seconds):
            jiffies = 100 * step
            fields = {
                "cpu_user": int(jiffies * busy / 100),
                "cpu_system": 0,
                "cpu_idle": int(jiffies * (100 - busy) / 100),
            }
            lines.append(line(series("node", {"server": server}), fields, (start + step) * 10**9))
    return lines


def write_slowness(**kwargs) -> None:
    influx.write_lines(slowness_lines(now=kwargs.pop("now", time.time()), **kwargs), "n")


def write_event(
    *,
    array: str,
    component: str,
    ident: str,
    description: str,
    sequence: int,
    at: float,
    priority: str = "critical",
    event_type: str = "0x226C",
) -> None:
    """One Major Event Log entry as the array collector writes it (at the event's own time)."""
    tags = {
        "server": COLLECTOR,
        "array": array,
        "component": component,
        "id": ident,
        "priority": priority,
        "event_type": event_type,
    }
    fields = {"sequence": sequence, "description": description}
    influx.write_lines([line(series("array_event", tags), fields, int(at) * 10**9)], "n")


def failed_drive_events(seconds_ago: float) -> tuple[Drive, str]:
    """The log of a drive of ssu01-a-vg03 failing `seconds_ago`, its group degraded a second
    later, and a drive of the other array (ssu01-b, 0,1,1) failing since: the drive and its
    address (tray,drawer,slot)."""
    drive = Drive.objects.select_related("enclosure").filter(volume_group__name="ssu01-a-vg03")[0]
    position = drive.enclosure.position
    address = f"{position},{drive.drawer},{drive.slot}"
    now = time.time()
    for array, component, ident, sequence, at, event_type, description in (
        (
            "ssu01-a",
            "drive",
            address,
            41,
            now - seconds_ago,
            "0x226C",
            f"Drive failed: tray {position}, drawer {drive.drawer}, slot {drive.slot}",
        ),
        (
            "ssu01-a",
            "volume_group",
            "ssu01-a-vg03",
            42,
            now - seconds_ago + 1,
            "0x2280",
            "Volume group ssu01-a-vg03 degraded",
        ),
        (
            "ssu01-b",
            "drive",
            "0,1,1",
            7,
            now - 60,
            "0x226C",
            "Drive failed: tray 0, drawer 1, slot 1",
        ),
    ):
        write_event(
            array=array,
            component=component,
            ident=ident,
            sequence=sequence,
            at=at,
            event_type=event_type,
            description=description,
        )
    return drive, address
