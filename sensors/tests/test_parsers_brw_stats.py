"""brw_stats in all its layouts: tab rows (kernel printf), space rows (hand-made samples),
(secs.usecs)/(secs.nsecs)/2.15 headers, empty sections, ZFS and ldiskfs section sets."""

from __future__ import annotations

import pytest

from sensors.parsers import parse_brw_stats, parse_lctl_get_param
from sensors.tests import fixture_text


def test_reads_2_15_debugfs_brw_stats():
    brw = parse_brw_stats(
        fixture_text("llnl-lmt/2.15.4_1.llnl/osd-zfs.lflood-OST0000.brw_stats.txt")
    )
    assert brw["snapshot_time"] == pytest.approx(1704924081.863048202)
    assert brw["start_time"] == pytest.approx(1704411146.856186487)
    assert brw["sections"]["pages_per_bulk_rw"]["1"] == {
        "read_ios": 213,
        "read_percent": 91,
        "read_cum_percent": 91,
        "write_ios": 0,
        "write_percent": 0,
        "write_cum_percent": 0,
    }
    assert brw["sections"]["disk_io_size"]["8K"]["read_ios"] == 28
    assert brw["sections"]["io_time"]["16"]["read_ios"] == 1
    assert brw["sections"]["block_maps_msec"] == {}
    assert "discontiguous_blocks" not in brw["sections"]  # ZFS has no such section


def test_reads_large_counts_in_ldiskfs_2_10():
    brw = parse_brw_stats(
        fixture_text("llnl-lmt/2.10.8/obdfilter.lquake-OST0000.brw_stats.ldiskfs.txt")
    )
    assert brw["snapshot_time"] == pytest.approx(1572404799.895621792)
    assert brw["sections"]["pages_per_bulk_rw"]["1"]["read_ios"] == 5713132
    assert brw["sections"]["pages_per_bulk_rw"]["2"]["write_ios"] == 2062606
    assert brw["sections"]["pages_per_bulk_rw"]["2"]["write_cum_percent"] == 43


def test_reads_space_separated_rows_without_blank_lines():
    brw = parse_brw_stats(
        fixture_text("telegraf-lustre2/osd-ldiskfs.OST0001.brw_stats.space-separated.txt")
    )
    assert brw["sections"]["discontiguous_pages"]["0"]["read_ios"] == 43942683
    assert brw["sections"]["disk_io_size"]["1M"]["write_ios"] == 850248
    assert brw["sections"]["io_time"]["1K"]["read_ios"] == 651


def test_reads_manual_secs_usecs_ldiskfs_sections():
    brw = parse_brw_stats(fixture_text("lustre-manual/osd.brw_stats.2013.secs-usecs.txt"))
    assert brw["snapshot_time"] == pytest.approx(1372775039.769045)
    assert brw["sections"]["disk_fragmented_ios"]["1"]["write_ios"] == 23243
    assert brw["sections"]["discontiguous_blocks"]["1"]["write_ios"] == 2
    assert brw["sections"]["io_time"]["8K"]["write_ios"] == 49


def test_empty_sections_and_block_maps():
    empty = parse_brw_stats(
        fixture_text("whamcloud-lustre-collector/brw_stats.start_and_elapsed_time.empty.txt")
    )
    assert empty["elapsed_time"] == pytest.approx(2340.955406625)
    assert len(empty["sections"]) == 8
    assert all(rows == {} for rows in empty["sections"].values())
    data = parse_brw_stats(fixture_text("whamcloud-lustre-collector/brw_stats.with_data.txt"))
    assert data["sections"]["block_maps_msec"]["1"]["read_ios"] == 12689
    assert data["sections"]["disk_ios_in_flight"]["13"]["write_ios"] == 1


def test_brw_stats_inside_lctl_output():
    params = dict(
        parse_lctl_get_param(
            fixture_text("whamcloud-lustre-collector/lctl-get_param.osd-ldiskfs.mixed-versions.txt")
        )
    )
    brw = parse_brw_stats(params["osd-ldiskfs.MGS.brw_stats"])
    assert brw["snapshot_time"] == pytest.approx(1648754081.716383375)
    assert set(brw["sections"]) >= {"disk_fragmented_ios", "disk_io_size"}


def test_zfs_mdt_brw_stats_of_2_10():
    brw = parse_brw_stats(
        fixture_text("hpe-lustre_exporter/osd-zfs.lustrefs-MDT0000.brw_stats.txt")
    )
    assert brw["sections"]["disk_io_size"]["8K"]["read_ios"] == 28
    assert brw["sections"]["disk_ios_in_flight"]["2"]["read_ios"] == 1
