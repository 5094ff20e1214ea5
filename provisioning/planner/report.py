"""A plan printed for a person: capacity, volume groups, targets, failover map, drawer pictures.

Works from the plan's JSON form only, so a stored plan prints the same as a fresh one.
"""

from __future__ import annotations

import textwrap

SPARE, EMPTY = "S", "."


def render_table(plan: dict) -> str:
    sections = [
        _heading(plan),
        _capacity(plan),
        _volume_groups(plan),
        _targets(plan),
        _failover_map(plan),
        _enclosures(plan),
    ]
    return "\n\n".join(sections) + "\n"


def _columns(header: list[str], rows: list[list[str]], indent: str = "  ") -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, *rows]
    return "\n".join(
        indent
        + "  ".join(
            str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)
        ).rstrip()
        for line in lines
    )


def _heading(plan: dict) -> str:
    servers = ", ".join(
        f"{server['hostname']} ({' '.join(server['nids'])})" for server in plan["servers"]
    )
    return (
        f"Filesystem {plan['filesystem']}, {plan['role'].upper()} unit {plan['ssu']}: "
        f"RAID {plan['raid']}, segment {plan['segment_kib']} KiB\n"
        f"Servers: {servers}"
    )


def _capacity(plan: dict) -> str:
    capacity = plan["capacity"]
    bandwidth = plan["expected_bandwidth_mb_s"]
    lines = [
        "Capacity",
        f"  drives {capacity['drives']}: {capacity['data_drives']} data, "
        f"{capacity['spares']} global spares; volume groups {capacity['volume_groups']}",
        f"  raw {capacity['raw_tb']:.1f} TB, usable {capacity['usable_tb']:.1f} TB "
        f"(data drives x drive TB x {capacity['usable_fraction']})",
    ]
    if bandwidth["per_ost"]:
        per_server = ", ".join(
            f"{host} {rate:.0f}" for host, rate in bandwidth["per_server"].items()
        )
        lines += [
            f"  expected back-end bandwidth {bandwidth['total']:.0f} MB/s: {per_server}",
            f"  ({bandwidth['per_ost']:.0f} MB/s per OST, at most {bandwidth['oss_ceiling']:.0f} "
            f"per OSS; one server alone after a failover {bandwidth['after_failover']:.0f})",
        ]
    return "\n".join(lines)


def _volume_groups(plan: dict) -> str:
    rows = [
        [
            group["name"],
            group["enclosure"],
            group["raid"],
            str(group["segment_kib"]),
            group["controller"],
            f"{group['usable_tb']:.1f}",
            "yes" if group["survives_drawer_loss"] else "no",
            " ".join(f"{drive['drawer']}:{drive['slot']}" for drive in group["drives"]),
        ]
        for group in plan["volume_groups"]
    ]
    header = ["VG", "ENCLOSURE", "RAID", "SEG", "CTRL", "TB", "DRAWER LOSS", "DRIVES drawer:slot"]
    return "Volume groups\n" + _columns(header, rows)


def _targets(plan: dict) -> str:
    rows = [
        [
            target["label"],
            str(target["index"]),
            target["kind"],
            target["volume_group"],
            target["primary"],
            target["failover"],
            target["controller"],
        ]
        for target in plan["targets"]
    ]
    header = ["LABEL", "INDEX", "KIND", "VG", "PRIMARY", "FAILOVER", "CTRL"]
    return "Targets\n" + _columns(header, rows)


def _failover_map(plan: dict) -> str:
    lines = ["Failover map"]
    for host, served in plan["failover_map"].items():
        partner = next(s["hostname"] for s in plan["servers"] if s["hostname"] != host)
        lines.append(f"  {host}")
        for title, labels in (
            ("normal", served["normal"]),
            (f"if {partner} fails", served["after_partner_failure"]),
        ):
            text = f"{title} ({len(labels)}): {' '.join(labels) or '-'}"
            lines += textwrap.wrap(
                text, width=98, initial_indent="    ", subsequent_indent="      ",
                break_on_hyphens=False,
            )  # fmt: skip
    return "\n".join(lines)


def _enclosures(plan: dict) -> str:
    owner: dict[tuple[str, int, int], str] = {}
    for group in plan["volume_groups"]:
        number = group["name"].rsplit("-vg", 1)[1]
        for drive in group["drives"]:
            owner[drive["enclosure"], drive["drawer"], drive["slot"]] = number
    for spare in plan["spares"]:
        owner[spare["enclosure"], spare["drawer"], spare["slot"]] = SPARE
    width = max((len(mark) for mark in owner.values()), default=1)

    lines = [f"Enclosures (slot = volume group number, {SPARE} = spare, {EMPTY} = no drive)"]
    for array in plan["arrays"]:
        for enclosure in array["enclosures"]:
            lines.append(
                f"  {enclosure['id']} {enclosure['model']} ({enclosure['kind']}), "
                f"{enclosure['drawers']} drawer(s) x {enclosure['slots_per_drawer']} slots"
            )
            for drawer in range(1, enclosure["drawers"] + 1):
                marks = [
                    owner.get((enclosure["id"], drawer, slot), EMPTY).rjust(width)
                    for slot in range(1, enclosure["slots_per_drawer"] + 1)
                ]
                lines.append(f"    drawer {drawer}  {' '.join(marks)}")
    return "\n".join(lines)
