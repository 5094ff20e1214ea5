"""Generic stats files: every layout from 2.1 to 2.15 read into the same structure. Expected
values are read by hand from the sample text."""

from __future__ import annotations

import pytest

from sensors.parsers import ParseError, parse_stats
from sensors.tests import fixture_text


def test_reads_2_15_obdfilter_stats_with_time_header_and_sumsq():
    stats = parse_stats(fixture_text("llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0001.stats.txt"))
    assert stats["snapshot_time"] == pytest.approx(1704924117.040584137)
    assert stats["start_time"] == pytest.approx(1704403917.045921397)
    assert stats["elapsed_time"] == pytest.approx(520199.994662740)
    write = stats["counters"]["write_bytes"]
    assert write == {
        "samples": 1704066,
        "unit": "bytes",
        "min": 1048576,
        "max": 1048576,
        "sum": 1786842710016,
        "sumsq": 1873640381497737216,
    }
    # 2.14+: `write` is a latency in usecs, not bytes.
    assert stats["counters"]["write"]["unit"] == "usecs"
    assert stats["counters"]["write"]["sum"] == 6335271385
    assert list(stats["counters"]) == [
        "read_bytes",
        "write_bytes",
        "read",
        "write",
        "destroy",
        "create",
        "statfs",
        "set_info",
    ]


def test_reads_counters_without_numbers_and_merges_a_repeated_name():
    # 2.10.1: `statfs` printed twice (35359 and 124430 samples), `[reqs]` with no numbers.
    stats = parse_stats(fixture_text("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.stats.txt"))
    assert stats["start_time"] is None
    assert stats["counters"]["statfs"]["samples"] == 35359 + 124430
    assert stats["counters"]["punch"] == {
        "samples": 57,
        "unit": "reqs",
        "min": None,
        "max": None,
        "sum": None,
        "sumsq": None,
    }
    assert stats["counters"]["write_bytes"]["sum"] == 16552048697344
    assert stats["counters"]["write_bytes"]["sumsq"] is None


def test_old_secs_usecs_fraction_is_microseconds_not_padded():
    # `1438693238.20113 secs.usecs` was printed with %lu: 20113 us = 0.020113 s.
    stats = parse_stats(fixture_text("telegraf-lustre2/mdt.OST0001.md_stats.txt"))
    assert stats["snapshot_time"] == pytest.approx(1438693238.020113)
    assert stats["counters"]["getxattr"]["samples"] == 6145349681


def test_reads_ptlrpc_service_stats():
    stats = parse_stats(fixture_text("hpe-lustre_exporter/ost.OSS.ost_io.stats.txt"))
    assert stats["counters"]["ost_write"] == {
        "samples": 4298777,
        "unit": "usec",
        "min": 71,
        "max": 684976,
        "sum": 13836421716,
        "sumsq": 530120972832328,
    }
    assert stats["counters"]["req_timeout"]["unit"] == "sec"


def test_reads_md_stats_of_2_15():
    stats = parse_stats(fixture_text("llnl-lmt/2.15.4_1.llnl/mdt.lflood-MDT0000.md_stats.txt"))
    assert stats["counters"]["statfs"]["samples"] == 302669
    assert stats["counters"]["getattr"]["sumsq"] == 655468


def test_reads_client_and_osd_stats():
    llite = parse_stats(fixture_text("lustre-manual/llite.stats.client.2011.secs-usecs.txt"))
    assert llite["counters"]["brw_read"]["sum"] == 2270
    assert llite["counters"]["seek"]["unit"] == "regs"
    osd = parse_stats(fixture_text("telegraf-lustre2/osd-ldiskfs.OST0001.stats.txt"))
    assert osd["counters"]["cache_miss"]["samples"] == 11653333250
    export = parse_stats(
        fixture_text(
            "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.exports.172.20.20.2-o2ib.stats.txt"
        )
    )
    assert export["counters"]["ping"]["samples"] == 1


def test_rejects_text_that_is_not_stats():
    with pytest.raises(ParseError):
        parse_stats("healthy\n")
