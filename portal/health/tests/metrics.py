"""Points in the sensors' schema (DESIGN.md §6), written to the real test InfluxDB, for a rack
described by the inventory: what the sensors of a healthy rack would send, with failures
applied on top. Used where no virtual rack with running sensors is needed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from portal import influxdb as influx
from portal.inventory.models import Drive, Server, StorageArray, Target


@dataclass
class RackMetrics:
    """What the sensors report; change the fields, then ``write()`` one round."""

    failed_drives: set[tuple[str, int, int, int]] = field(default_factory=set)  # array,tray,d,s
    # New drives in failed ones' slots, holding no data until reconstructed ("Replaced").
    replaced_drives: set[tuple[str, int, int, int]] = field(default_factory=set)
    reconstructing: dict[str, int] = field(default_factory=dict)  # volume group -> percent
    silent_servers: set[str] = field(default_factory=set)
    moved_to: dict[str, str] = field(default_factory=dict)  # target label -> server
    failed_controllers: set[tuple[str, str]] = field(default_factory=set)
    temperatures: dict[str, float] = field(default_factory=dict)  # server -> °C
    fill_percent: dict[str, float] = field(default_factory=dict)  # target label -> %
    counters: dict[str, int] = field(default_factory=dict)
    # Measurements a round leaves out (their collector, on an interval of its own, is not
    # due), and the collectors' intervals the `sensor` point says ({"bmc": 60.0}).
    not_due: set[str] = field(default_factory=set)
    intervals: dict[str, float] = field(default_factory=dict)
    # The array collector's server (OSTARA_ARRAYS_SERVER): it reports the arrays with
    # management addresses, its own `sensor` point saying its santricity interval, and how
    # late its run is (``collector_late``); ``collector_silent``: it sends nothing.
    collector: str = ""
    collector_late: float = 0.0
    collector_silent: bool = False
    # Controller points without their array's count of groups not ok (a sensor from before it).
    uncounted: bool = False

    def lines(self, moment: float) -> list[str]:
        stamp = int(moment * 1000)
        lines = []
        targets = list(
            Target.objects.select_related("primary_server", "filesystem", "volume_group")
        )
        servers = list(Server.objects.select_related("pair"))
        for server in servers:
            if server.hostname in self.silent_servers:
                continue
            host = server.hostname
            tick = self.counters[host] = self.counters.get(host, 0) + 1
            said = "".join(f",{name}_interval={s}" for name, s in self.intervals.items())
            lines.append(
                f"sensor,server={host} points=100i,parse_errors=0i,collect_seconds=0.1{said} "
                f"{stamp}"
            )
            lines.append(
                f"node,server={host},role={server.role} cpu_user={1000 * tick}i,"
                f"cpu_system={500 * tick}i,cpu_idle={8500 * tick}i,cpu_iowait={100 * tick}i,"
                f"mem_total_kb=262144000i,mem_available_kb=200000000i,load1=1.5,"
                f"lustre_healthy=1i {stamp}"
            )
            lines.append(
                f"lnet,server={host} send_bytes={10**9 * tick}i,recv_bytes={2 * 10**9 * tick}i,"
                f"errors=0i {stamp}"
            )
            if "bmc" in self.not_due:
                continue
            celsius = self.temperatures.get(host, 41.0)
            lines.append(
                f"bmc,server={host},sensor=CPU1\\ Temp,type=temperature "
                f"value={celsius},ok=1i {stamp}"
            )
            lines.append(f"bmc,server={host},sensor=FAN1,type=fan value=4200,ok=1i {stamp}")
        for target in targets:
            if target.kind == "MGT":
                continue
            host = self.moved_to.get(target.label, target.primary_server.hostname)
            if host in self.silent_servers:
                continue
            fs, _, name = target.label.rpartition("-")
            measurement = "ost" if target.kind == "OST" else "mdt"
            total = 100 * 2**30
            fill = self.fill_percent.get(target.label, 40.0)
            free = int(total * (1 - fill / 100))
            tick = self.counters.get(host, 1)
            lines.append(
                f"{measurement},fs={fs},target={name},server={host} "
                f"read_bytes={400 * 10**6 * tick}i,read_calls={400 * tick}i,"
                f"write_bytes={300 * 10**6 * tick}i,write_calls={300 * tick}i,"
                f"kbytes_total={total}i,kbytes_free={free}i,kbytes_avail={free}i {stamp}"
            )
            if measurement == "ost":
                for bucket, count in (("4K", 10), ("128K", 40), ("1M", 200)):
                    lines.append(
                        f"brw,fs={fs},target={name},server={host},section=disk_io_size,"
                        f"bucket={bucket} read_ios={count * tick}i,write_ios={count * tick // 2}i "
                        f"{stamp}"
                    )
        reporters = {}
        if self.collector and not self.collector_silent and "array" not in self.not_due:
            late = f",santricity_late={self.collector_late}" if self.collector_late else ""
            lines.append(
                f"sensor,server={self.collector} points=50i,parse_errors=0i,collect_seconds=2.0,"
                f"santricity_interval=60,santricity_seconds=2.0{late} {stamp}"
            )
        for array in StorageArray.objects.prefetch_related("pair__servers"):
            if "array" in self.not_due:
                break
            if self.collector and array.management_a:
                if not self.collector_silent:
                    reporters[array.name] = self.collector
                continue
            alive = [
                s.hostname
                for s in array.pair.servers.all()
                if s.hostname not in self.silent_servers
            ]
            if alive:
                reporters[array.name] = alive[0]
        for drive in Drive.objects.select_related("enclosure__array", "volume_group"):
            array = drive.enclosure.array.name
            if array not in reporters:
                continue
            address = (array, drive.enclosure.position, drive.drawer, drive.slot)
            state, ok = ("failed", 0) if address in self.failed_drives else ("optimal", 1)
            if address in self.replaced_drives:
                state, ok = "replaced", 0
            ident = f"{drive.enclosure.position}.{drive.drawer}.{drive.slot}"
            lines.append(
                f"array,server={reporters[array]},array={array},component=drive,id={ident} "
                f'state="{state}",ok={ok}i {stamp}'
            )
        for array in StorageArray.objects.prefetch_related("volume_groups__drives__enclosure"):
            if array.name not in reporters:
                continue
            not_ok = 0
            for group in array.volume_groups.all():
                lost = sum(
                    1
                    for d in group.drives.all()
                    if (array.name, d.enclosure.position, d.drawer, d.slot)
                    in self.failed_drives | self.replaced_drives
                )
                state = (
                    "optimal"
                    if not lost
                    else "degraded"
                    if lost == 1
                    else "critical"
                    if lost == 2
                    else "failed"
                )
                not_ok += state != "optimal"
                operation = ""
                if group.name in self.reconstructing:
                    percent = self.reconstructing[group.name]
                    operation = f',operation="reconstruction",progress={percent}i'
                lines.append(
                    f"array,server={reporters[array.name]},array={array.name},"
                    f"component=volume_group,id={group.name} "
                    f'state="{state}",ok={1 if state == "optimal" else 0}i{operation} {stamp}'
                )
            # The controllers after the groups, counting those not ok, as sensors.arrays does.
            counted = "" if self.uncounted else f",groups_not_ok={not_ok}i"
            for controller in "AB":
                bad = (array.name, controller) in self.failed_controllers
                lines.append(
                    f"array,server={reporters[array.name]},array={array.name},"
                    f"component=controller,id={controller} "
                    f'state="{"failed" if bad else "optimal"}",ok={0 if bad else 1}i'
                    f"{counted} {stamp}"
                )
        return lines

    def write(self, moment: float | None = None) -> None:
        influx.write_lines(self.lines(time.time() if moment is None else moment), precision="ms")
