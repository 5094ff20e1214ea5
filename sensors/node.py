"""Collectors of the server itself: CPU, memory and load from /proc (`node`), Lustre's
health_check (`node.lustre_healthy`) and LNet's counters (`lnet`).

Files that do not exist are left out quietly (a virtual host has no /proc/stat, a server
without Lustre loaded has no health_check); files that exist and do not parse are reported.
"""

from __future__ import annotations

import os

from sensors import schema
from sensors.layout import LustreTree
from sensors.parsers import parse_health_check, parse_lnet_stats
from sensors.rounds import Round


def parse_proc_stat(text: str) -> dict[str, int]:
    """The aggregate `cpu` line of /proc/stat, in jiffies (USER_HZ)."""
    for row in text.splitlines():
        if row.startswith("cpu "):
            values = [int(v) for v in row.split()[1:]]
            return dict(zip(schema.CPU_FIELDS, values, strict=False))
    raise ValueError("no aggregate cpu line")


def parse_meminfo(text: str) -> dict[str, int]:
    fields = {}
    for row in text.splitlines():
        name, _, rest = row.partition(":")
        field = schema.MEMINFO_FIELDS.get(name)
        if field:
            fields[field] = int(rest.split()[0])
    if schema.MEMINFO_FIELDS["MemTotal"] not in fields:
        raise ValueError("no MemTotal line")
    return fields


def parse_loadavg(text: str) -> dict[str, float]:
    one, five, fifteen = (float(v) for v in text.split()[:3])
    return dict(zip(schema.LOAD_FIELDS, (one, five, fifteen), strict=True))


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
            fields[schema.LUSTRE_HEALTHY] = 1 if health["healthy"] else 0
    rnd.add(schema.NODE.name, {schema.ROLE: role}, fields)


def collect_lnet(tree: LustreTree, rnd: Round) -> None:
    path = tree.lnet_path("stats")
    if path is None:
        return
    stats = rnd.parse(path, parse_lnet_stats)
    if stats is not None:
        rnd.add(
            schema.LNET.name,
            {},
            {schema.LNET_COUNTER_FIELDS[name]: value for name, value in stats.items()},
        )
