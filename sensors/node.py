"""Collectors of the server itself: CPU, memory and load from /proc (`node`), Lustre's
health_check (`node.lustre_healthy`) and LNet's counters (`lnet`).

Files that do not exist are left out quietly (a virtual host has no /proc/stat, a server
without Lustre loaded has no health_check); files that exist and do not parse are reported.
"""

from __future__ import annotations

import os

from sensors.layout import LustreTree
from sensors.parsers import parse_health_check, parse_lnet_stats
from sensors.rounds import Round

CPU_FIELDS = (
    "cpu_user",
    "cpu_nice",
    "cpu_system",
    "cpu_idle",
    "cpu_iowait",
    "cpu_irq",
    "cpu_softirq",
    "cpu_steal",
)
MEMINFO_FIELDS = {
    "MemTotal": "mem_total_kb",
    "MemFree": "mem_free_kb",
    "MemAvailable": "mem_available_kb",
    "Buffers": "mem_buffers_kb",
    "Cached": "mem_cached_kb",
}
# LNet `stats` names (parsers.LNET_STATS_FIELDS) -> our fields; lengths are bytes.
LNET_FIELDS = {
    "msgs_alloc": "msgs_alloc",
    "msgs_max": "msgs_max",
    "errors": "errors",
    "send_count": "send_count",
    "recv_count": "recv_count",
    "route_count": "route_count",
    "drop_count": "drop_count",
    "send_length": "send_bytes",
    "recv_length": "recv_bytes",
    "route_length": "route_bytes",
    "drop_length": "drop_bytes",
}


def parse_proc_stat(text: str) -> dict[str, int]:
    """The aggregate `cpu` line of /proc/stat, in jiffies (USER_HZ)."""
    for row in text.splitlines():
        if row.startswith("cpu "):
            values = [int(v) for v in row.split()[1:]]
            return dict(zip(CPU_FIELDS, values, strict=False))
    raise ValueError("no aggregate cpu line")


def parse_meminfo(text: str) -> dict[str, int]:
    fields = {}
    for row in text.splitlines():
        name, _, rest = row.partition(":")
        field = MEMINFO_FIELDS.get(name)
        if field:
            fields[field] = int(rest.split()[0])
    if "mem_total_kb" not in fields:
        raise ValueError("no MemTotal line")
    return fields


def parse_loadavg(text: str) -> dict[str, float]:
    one, five, fifteen = (float(v) for v in text.split()[:3])
    return {"load1": one, "load5": five, "load15": fifteen}


def collect_node(tree: LustreTree, rnd: Round, role: str) -> None:
    fields: dict = {}
    for name, parser in (
        ("stat", parse_proc_stat),
        ("meminfo", parse_meminfo),
        ("loadavg", parse_loadavg),
    ):
        path = os.path.join(tree.root, "proc", name)
        if os.path.isfile(path):
            values = rnd.parse(path, parser)
            if values:
                fields.update(values)
    health_path = tree.path("health_check")
    if health_path:
        health = rnd.parse(health_path, parse_health_check)
        if health is not None:
            fields["lustre_healthy"] = 1 if health["healthy"] else 0
    rnd.add("node", {"role": role}, fields)


def collect_lnet(tree: LustreTree, rnd: Round) -> None:
    path = tree.lnet_path("stats")
    if path is None:
        return
    stats = rnd.parse(path, parse_lnet_stats)
    if stats is not None:
        rnd.add("lnet", {}, {LNET_FIELDS[name]: value for name, value in stats.items()})
