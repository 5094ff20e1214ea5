"""Capacity and expected bandwidth match the vendor figures quoted in DESIGN.md section 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from provisioning.planner import make_plan

SPECS = Path(__file__).parent / "specs"


def load(name: str) -> dict:
    return json.loads((SPECS / name).read_text())


def oss_spec(arrays: list[dict], **fields: object) -> dict:
    spec = load("reference_ssu.json")
    spec["arrays"] = arrays
    spec.update(fields)
    return spec


def e5560_arrays(count: int, drive_tb: float, with_expansion: bool = True) -> list[dict]:
    return [
        {
            "name": f"ssu01-{chr(ord('a') + number)}",
            "controller": "E5560",
            "expansions": ["DE6600"] if with_expansion else [],
            "drive_tb": drive_tb,
        }
        for number in range(count)
    ]


def four_significant_figures(value: float) -> float:
    """How the vendor table quotes usable capacity (133.488 -> 133.5, 1423.872 -> 1424)."""
    return round(value, 3 - math.floor(math.log10(abs(value))))


# The vendor table: drive TB, drives, raw TB, usable TB as quoted.
VENDOR_TABLE = [
    (3, 60, 180, 133.5),
    (3, 120, 360, 267),
    (4, 120, 480, 356),
    (4, 480, 1920, 1424),
    (6, 240, 1440, 1068),
]


@pytest.mark.parametrize(("drive_tb", "drives", "raw_tb", "usable_tb"), VENDOR_TABLE)
def test_capacity_reproduces_the_vendor_table(drive_tb, drives, raw_tb, usable_tb):
    if drives == 60:
        arrays = e5560_arrays(1, drive_tb, with_expansion=False)
    else:
        arrays = e5560_arrays(drives // 120, drive_tb)
    capacity = make_plan(oss_spec(arrays))["capacity"]
    assert capacity["drives"] == drives
    assert capacity["raw_tb"] == raw_tb
    assert capacity["data_drives"] == drives * 8 // 10
    # The plan keeps 3 decimals; the table quotes 4 significant figures.
    assert four_significant_figures(capacity["usable_tb"]) == usable_tb
    assert capacity["usable_tb"] == pytest.approx(drives * 0.8 * drive_tb * 0.927, abs=0.0005)


def test_usable_capacity_keeps_three_decimals():
    capacity = make_plan(oss_spec(e5560_arrays(1, 3, with_expansion=False)))["capacity"]
    assert capacity["usable_tb"] == 133.488


def test_me4084_carries_eight_groups_and_four_spares_of_which_spares_add_raw_only():
    spec = oss_spec([{"name": "ssu01-a", "controller": "ME4084", "drive_tb": 4}])
    plan = make_plan(spec)
    capacity = plan["capacity"]
    assert capacity["drives"] == 84
    assert capacity["volume_groups"] == 8
    assert capacity["spares"] == len(plan["spares"]) == 4
    assert capacity["data_drives"] == 64
    assert capacity["raw_tb"] == 336
    assert capacity["usable_tb"] == 237.312  # 64 x 4 x 0.927


def test_mdt_array_raid10_keeps_half_its_drives_for_data():
    plan = make_plan(load("mds_pair.json"))
    capacity = plan["capacity"]
    assert capacity["drives"] == 24
    assert capacity["data_drives"] == 12
    assert capacity["raw_tb"] == pytest.approx(28.8)
    assert capacity["usable_tb"] == pytest.approx(12 * 1.2 * 0.927, abs=0.0005)


def test_spares_count_in_raw_capacity_only():
    plain = make_plan(oss_spec(e5560_arrays(1, 4)))["capacity"]
    arrays = e5560_arrays(1, 4)
    arrays[0]["global_spares"] = 10
    spared = make_plan(oss_spec(arrays))["capacity"]
    assert spared["raw_tb"] == plain["raw_tb"] == 480
    assert spared["data_drives"] == plain["data_drives"] - 8
    assert spared["usable_tb"] == pytest.approx(88 * 4 * 0.927, abs=0.0005)


def test_reference_ssu_expects_about_410_mb_s_per_ost_and_10_gb_s_in_all():
    bandwidth = make_plan(load("reference_ssu.json"))["expected_bandwidth_mb_s"]
    assert bandwidth["per_ost"] == 410
    assert bandwidth["per_server"] == {"oss01": 4920, "oss02": 4920}
    assert bandwidth["total"] == 9840
    # One server carrying all 24 OSTs after a failover is held at the OSS ceiling.
    assert bandwidth["after_failover"] == bandwidth["oss_ceiling"] == 5000


def test_a_rack_of_two_reference_ssus_matches_the_measured_19_8_gb_s():
    first = make_plan(load("reference_ssu.json"))
    second_spec = load("reference_ssu.json")
    second_spec["first_ost_index"] = 24
    second = make_plan(second_spec)
    rack = first["expected_bandwidth_mb_s"]["total"] + second["expected_bandwidth_mb_s"]["total"]
    assert rack == pytest.approx(19_800, rel=0.01)


def test_512_kib_segments_raise_the_expected_rate_to_the_oss_ceiling():
    plan = make_plan({**load("reference_ssu.json"), "segment_kib": 512})
    bandwidth = plan["expected_bandwidth_mb_s"]
    assert bandwidth["per_ost"] == pytest.approx(410 * 1.03, abs=0.05)
    # 12 x 422.3 = 5067.6: more than 20 GB/s per 4-OSS rack before the ceiling holds it at 5000.
    assert bandwidth["per_server"] == {"oss01": 5000, "oss02": 5000}
    assert 2 * bandwidth["total"] >= 20_000


def test_256_kib_segments_sit_between_128_and_512():
    rates = [
        make_plan({**load("reference_ssu.json"), "segment_kib": size})["expected_bandwidth_mb_s"][
            "per_ost"
        ]
        for size in (128, 256, 512)
    ]
    assert rates[0] < rates[1] < rates[2]


def test_uneven_ost_count_gives_the_servers_their_own_share():
    arrays = e5560_arrays(1, 4, with_expansion=False)
    arrays[0]["drives"] = 50  # 5 OSTs: 3 on one server, 2 on the other
    bandwidth = make_plan(oss_spec(arrays))["expected_bandwidth_mb_s"]
    assert sorted(bandwidth["per_server"].values()) == [820, 1230]
    assert bandwidth["total"] == 2050


def test_mds_pair_expects_no_ost_bandwidth():
    bandwidth = make_plan(load("mds_pair.json"))["expected_bandwidth_mb_s"]
    assert bandwidth["total"] == 0
    assert bandwidth["per_server"] == {"mds01": 0, "mds02": 0}
