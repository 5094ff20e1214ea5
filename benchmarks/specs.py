"""The reference rack of the benchmarks, as wizard specs: an MDS pair and SSUs of two E5560
arrays with a DE6600 expansion each (24 OSTs per SSU). The rack tests build the same MDS pair."""

from __future__ import annotations


def mds_spec() -> dict:
    return {
        "filesystem": "scratch",
        "ssu": "mds01",
        "role": "mds",
        "servers": [
            {
                "hostname": "mds01",
                "nids": ["10.10.0.1@o2ib"],
                "bmc": "10.20.0.1",
                "pdu_outlet": "pdu1:1",
            },
            {
                "hostname": "mds02",
                "nids": ["10.10.0.2@o2ib"],
                "bmc": "10.20.0.2",
                "pdu_outlet": "pdu2:1",
            },
        ],
        "raid": "10",
        "segment_kib": 128,
        "arrays": [{"name": "mds01-a", "controller": "E2724", "drive_tb": 1.2}],
    }


def ssu_spec(number: int) -> dict:
    """SSU ``number``: its servers on outlets 3 and 4 of PDU ``number`` (the MDS pair has outlet
    1 of PDUs 1 and 2), each address and outlet its own, as the wizard demands."""
    a, b = 2 * number - 1, 2 * number
    return {
        "filesystem": "scratch",
        "ssu": f"ssu{number:03d}",
        "servers": [
            {
                "hostname": f"oss{a:03d}",
                "nids": [f"10.11.{a // 250}.{a % 250 + 1}@o2ib"],
                "bmc": f"10.21.{a // 250}.{a % 250 + 1}",
                "pdu_outlet": f"pdu{number}:3",
            },
            {
                "hostname": f"oss{b:03d}",
                "nids": [f"10.11.{b // 250}.{b % 250 + 1}@o2ib"],
                "bmc": f"10.21.{b // 250}.{b % 250 + 1}",
                "pdu_outlet": f"pdu{number}:4",
            },
        ],
        "arrays": [
            {
                "name": f"ssu{number:03d}-a",
                "controller": "E5560",
                "expansions": ["DE6600"],
                "drive_tb": 4,
            },
            {
                "name": f"ssu{number:03d}-b",
                "controller": "E5560",
                "expansions": ["DE6600"],
                "drive_tb": 4,
            },
        ],
        "raid": "8+2",
        "segment_kib": 128,
        "first_ost_index": 24 * (number - 1),
    }
