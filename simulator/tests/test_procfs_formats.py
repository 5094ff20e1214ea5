"""The virtual rack's files are read by the same parsers, into the same structure, as the
real Lustre 2.15 samples: a sensor cannot tell them apart."""

from __future__ import annotations

import re

import pytest

from sensors import parsers
from sensors.tests import fixture_text
from simulator.rack import Rack


@pytest.fixture
def busy_root(built_rack):
    with Rack.open(built_rack) as rack:
        rack.set_scenario("balanced")
        for _ in range(3):
            rack.advance(by=10)
        rack.render()
    return built_rack / "hosts"


def read(path):
    return path.read_text()


def shape(line: str) -> str:
    """A line with its numbers blanked: the fixed text and the column layout remain."""
    return re.sub(r"\d+", "N", line)


def ost_dirs(root, host="oss01"):
    return sorted((root / host / "proc/fs/lustre/obdfilter").iterdir())


def test_obdfilter_stats_like_2_15(busy_root):
    real = parsers.parse_stats(
        fixture_text("llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0001.stats.txt")
    )
    ours = parsers.parse_stats(read(ost_dirs(busy_root)[0] / "stats"))
    assert ours.keys() == real.keys()
    assert all(ours[k] is not None for k in ("snapshot_time", "start_time", "elapsed_time"))
    for name in ("read_bytes", "write_bytes", "read", "write", "statfs"):
        assert ours["counters"][name].keys() == real["counters"][name].keys()
        assert ours["counters"][name]["unit"] == real["counters"][name]["unit"]
        assert ours["counters"][name]["sumsq"] is not None
    real_lines = fixture_text("llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0001.stats.txt")
    our_lines = read(ost_dirs(busy_root)[0] / "stats")
    # Same column layout as the kernel's printf, header and counter lines alike.
    assert [shape(x) for x in our_lines.splitlines()[:3]] == [
        shape(x) for x in real_lines.splitlines()[:3]
    ]
    real_write = next(x for x in real_lines.splitlines() if x.startswith("write_bytes"))
    our_write = next(x for x in our_lines.splitlines() if x.startswith("write_bytes"))
    assert shape(our_write) == shape(real_write)


def test_ost_job_stats_like_2_15(busy_root):
    real = parsers.parse_job_stats(
        fixture_text(
            "whamcloud-lustre-collector/obdfilter.job_stats.lfs.0.2023-06.time-triple-hist.txt"
        )
    )[0]
    text = read(ost_dirs(busy_root)[0] / "job_stats")
    jobs = parsers.parse_job_stats(text)
    assert jobs, "a balanced workload leaves job_stats on every OST"
    ours = jobs[0]
    assert ours.keys() == real.keys()
    assert list(ours["counters"]) == list(real["counters"])  # same counters, same order
    for name, counter in ours["counters"].items():
        real_keys = set(real["counters"][name]) - {"hist"}  # hist arrived in 2.16
        assert set(counter) == real_keys
    assert ours["counters"]["write"]["unit"] == "usecs"
    assert parsers.job_bytes(ours)[1] == ours["counters"]["write_bytes"]["sum"]
    # 2.15 job id line and counter line layout
    real_text = fixture_text(
        "whamcloud-lustre-collector/obdfilter.job_stats.lfs.0.2023-06.time-triple-hist.txt"
    )
    real_statfs = next(x for x in real_text.splitlines() if "statfs:" in x)
    our_statfs = next(x for x in text.splitlines() if "statfs:" in x)
    assert shape(our_statfs) == shape(real_statfs)


def test_brw_stats_like_2_15_ldiskfs(busy_root):
    label = ost_dirs(busy_root)[0].name
    text = read(busy_root / "oss01/sys/kernel/debug/lustre/osd-ldiskfs" / label / "brw_stats")
    ours = parsers.parse_brw_stats(text)
    empty_215 = parsers.parse_brw_stats(
        fixture_text("whamcloud-lustre-collector/brw_stats.start_and_elapsed_time.empty.txt")
    )
    real_215 = parsers.parse_brw_stats(
        fixture_text("llnl-lmt/2.15.4_1.llnl/osd-zfs.lflood-OST0000.brw_stats.txt")
    )
    assert ours.keys() == real_215.keys()
    assert list(ours["sections"]) == list(empty_215["sections"])  # the 8 ldiskfs sections
    row = next(iter(ours["sections"]["pages_per_bulk_rw"].values()))
    assert row.keys() == next(iter(real_215["sections"]["pages_per_bulk_rw"].values())).keys()
    assert ours["sections"]["disk_io_size"]
    real_text = fixture_text("llnl-lmt/2.15.4_1.llnl/osd-zfs.lflood-OST0000.brw_stats.txt")
    assert [shape(x) for x in text.splitlines()[:6]] == [
        shape(x) for x in real_text.splitlines()[:6]
    ]


def test_md_stats_and_mdt_job_stats_like_2_15(busy_root):
    mdt = busy_root / "mds01/proc/fs/lustre/mdt/scratch-MDT0000"
    real = parsers.parse_stats(
        fixture_text("llnl-lmt/2.15.4_1.llnl/mdt.lflood-MDT0000.md_stats.txt")
    )
    ours = parsers.parse_stats(read(mdt / "md_stats"))
    assert ours.keys() == real.keys()
    assert ours["counters"]["statfs"].keys() == real["counters"]["statfs"].keys()
    assert ours["counters"]["statfs"]["unit"] == real["counters"]["statfs"]["unit"] == "usecs"
    jobs = parsers.parse_job_stats(read(mdt / "job_stats"))
    real_jobs = parsers.parse_job_stats(
        fixture_text("whamcloud-lustre-collector/mdt.job_stats.touch.0.2021-03.usecs-sumsq.txt")
    )
    # 2.15 adds read, write (before punch), migrate and fallocate to the 2.14 counters.
    real_names = list(real_jobs[0]["counters"])
    assert real_names[-1] == "punch"
    assert list(jobs[0]["counters"]) == real_names[:-1] + [
        "read",
        "write",
        "punch",
        "migrate",
        "fallocate",
    ]


def test_service_lnet_and_single_values(busy_root):
    oss = busy_root / "oss01"
    real = parsers.parse_stats(fixture_text("hpe-lustre_exporter/ost.OSS.ost_io.stats.txt"))
    ours = parsers.parse_stats(read(oss / "sys/kernel/debug/lustre/ost/OSS/ost_io/stats"))
    assert ours["counters"]["ost_write"].keys() == real["counters"]["ost_write"].keys()
    assert ours["counters"]["req_waittime"]["unit"] == real["counters"]["req_waittime"]["unit"]
    assert ours["counters"]["req_timeout"]["unit"] == "sec"
    lnet = parsers.parse_lnet_stats(read(oss / "sys/kernel/debug/lnet/stats"))
    assert (
        lnet.keys()
        == parsers.parse_lnet_stats(fixture_text("llnl-lmt/2.15.4_1.llnl/lnet.stats.txt")).keys()
    )
    label = ost_dirs(busy_root)[0].name
    sysdir = oss / "sys/fs/lustre/obdfilter" / label
    total = parsers.parse_single_value(read(sysdir / "kbytestotal"))
    free = parsers.parse_single_value(read(sysdir / "kbytesfree"))
    avail = parsers.parse_single_value(read(sysdir / "kbytesavail"))
    assert isinstance(total, int) and total > free > avail > 0
    # 8 data drives x 4 TB x 0.927 of a reference OST, in KiB
    assert total == int(8 * 4e12 * 0.927 / 1024)
    assert (
        parsers.parse_single_value(read(sysdir / "filestotal"))
        > parsers.parse_single_value(read(sysdir / "filesfree"))
        > 0
    )
    assert parsers.parse_health_check(read(oss / "sys/fs/lustre/health_check"))["healthy"]
    assert parsers.parse_single_value(read(oss / "sys/fs/lustre/version")) == "2.15.4"
    status = parsers.parse_recovery_status(read(ost_dirs(busy_root)[0] / "recovery_status"))
    assert status == {"status": "INACTIVE"}  # first mount after format
    osd = oss / "sys/fs/lustre/osd-ldiskfs" / label
    assert read(osd / "fstype") == "ldiskfs\n"
    assert parsers.parse_single_value(read(osd / "kbytestotal")) == total


def test_node_files(busy_root):
    oss = busy_root / "oss01"
    cpu = read(oss / "proc/stat").splitlines()[0].split()
    assert cpu[0] == "cpu" and len(cpu) == 11 and all(v.isdigit() for v in cpu[1:])
    meminfo = dict(line.split(":", 1) for line in read(oss / "proc/meminfo").splitlines())
    assert meminfo["MemTotal"].strip().endswith("kB")
    load = read(oss / "proc/loadavg").split()
    assert len(load) == 5 and float(load[0]) > 0
    mounts = read(oss / "proc/mounts")
    assert " lustre ro,svname=scratch-OST0000," in mounts
