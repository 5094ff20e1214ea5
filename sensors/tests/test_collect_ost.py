"""The OST collector on the real samples of Lustre 2.15, 2.12 and 2.10, each laid out where
that release keeps it. Every expected number below was read by hand from the sample files
under sensors/tests/fixtures/lustre/ (path named next to it)."""

from __future__ import annotations

import pytest

from sensors.tests.lp import collect_root, one, points_of
from sensors.tests.roots import build_release_root

TS = 1_700_000_000_000


@pytest.fixture
def root_215(tmp_path):
    return build_release_root(tmp_path, "2.15")


def test_215_ost_bytes_calls_and_latencies_are_the_kernel_counters(root_215):
    rnd, points = collect_root(root_215, TS)
    assert rnd.errors == 0
    # llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0001.stats.txt
    ost = one(points, "ost", target="OST0001")
    assert ost.tags == {
        "fs": "lflood",
        "target": "OST0001",
        "server": "oss01",
        "ssu": "ssu01",
        "pair": "pair01",
    }
    assert ost.timestamp == TS
    # read_bytes 1705491 samples [bytes] 1048576 1048576 1788336930816 ...
    assert ost.fields["read_bytes"] == 1788336930816
    assert ost.fields["read_calls"] == 1705491
    # write_bytes 1704066 samples [bytes] 1048576 1048576 1786842710016 ...
    assert ost.fields["write_bytes"] == 1786842710016
    assert ost.fields["write_calls"] == 1704066
    # read/write [usecs] are latencies: only their sums, never mistaken for bytes
    assert ost.fields["read_usecs"] == 3265635927
    assert ost.fields["write_usecs"] == 6335271385
    assert "read" not in ost.fields and "write" not in ost.fields
    # destroy 480013 samples [usecs] 19 7320483 113487024 ...
    assert ost.fields["destroy"] == 480013
    assert ost.fields["destroy_usecs"] == 113487024
    assert ost.fields["statfs"] == 406158
    assert ost.fields["create"] == 85


def test_215_ost_line_is_exact_line_protocol(root_215):
    rnd, _ = collect_root(root_215, TS)
    line = next(x for x in rnd.lines if x.startswith("ost,") and "target=OST0001" in x)
    assert line.startswith(
        "ost,fs=lflood,pair=pair01,server=oss01,ssu=ssu01,target=OST0001 "
        "read_calls=1705491i,read_bytes=1788336930816i,write_calls=1704066i,"
        "write_bytes=1786842710016i,read_usecs=3265635927i,write_usecs=6335271385i,"
    )
    assert line.endswith(f" {TS}")


def test_215_capacity_from_sysfs_and_recovery_from_procfs(root_215):
    _, points = collect_root(root_215, TS)
    ost = one(points, "ost", target="OST0000")
    # hpe-lustre_exporter/obdfilter.lustrefs-OST0000.{kbytes*,files*}.txt, placed in sysfs
    assert root_215.joinpath("sys/fs/lustre/obdfilter/lflood-OST0000/kbytestotal").exists()
    assert ost.fields["kbytes_total"] == 47168367616
    assert ost.fields["kbytes_free"] == 47029440512
    assert ost.fields["kbytes_avail"] == 47025124352
    assert ost.fields["files_total"] == 45927444
    assert ost.fields["files_free"] == 45927188
    # obdfilter.lustrefs-OST0000.recovery_status.txt: status: COMPLETE, completed_clients: 1/1
    assert ost.fields["recovery_status"] == "COMPLETE"
    assert ost.fields["recovery_completed_clients"] == 1
    # llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0000.stats.txt: create 8 samples [usecs]
    assert ost.fields["create"] == 8
    assert ost.fields["create_usecs"] == 4227696


def test_215_brw_stats_from_debugfs(root_215):
    _, points = collect_root(root_215, TS)
    assert root_215.joinpath("sys/kernel/debug/lustre/osd-zfs/lflood-OST0000/brw_stats").exists()
    # osd-zfs.lflood-OST0000.brw_stats.txt, "pages per bulk r/w": 1: 213 ... | 0
    brw = one(points, "brw", target="OST0000", section="pages_per_bulk_rw", bucket="1")
    assert brw.fields == {"read_ios": 213, "write_ios": 0}
    assert brw.tags["fs"] == "lflood" and brw.tags["server"] == "oss01"
    # "disk I/O size": 128: 190 81 85 | 0 0 0 ; 8K: 28 12 100 | 0
    assert one(points, "brw", section="disk_io_size", bucket="128").fields["read_ios"] == 190
    assert one(points, "brw", section="disk_io_size", bucket="8K").fields["read_ios"] == 28
    # I/O time buckets start at 4 on this ZFS server
    buckets = [p.tags["bucket"] for p in points_of(points, "brw", section="io_time")]
    assert buckets == ["4", "8", "16", "32"]
    # the empty "block maps msec" section and the ldiskfs-only ones write nothing
    sections = {p.tags["section"] for p in points_of(points, "brw")}
    assert sections == {
        "pages_per_bulk_rw",
        "discontiguous_pages",
        "disk_ios_in_flight",
        "io_time",
        "disk_io_size",
    }


def test_215_job_stats_quoted_ids_kept_whole_and_bytes_not_latency(root_215):
    _, points = collect_root(root_215, TS)
    # lctl-get_param.obdfilter-job_stats.exascaler-2.14.0_ddn.quoted-jobid-hist.txt:
    # - job_id: "SLURM_JOB10:0:es18kxe-co-client"
    #   write_bytes: { samples: 861, ..., sum: 11025514496, ... }
    #   write:       { samples: 861, unit: usecs, ..., sum: 7304967, ... }
    #   punch:       { samples: 85, unit: usecs, ..., sum: 16840, ... }
    job = one(points, "ost_job", target="OST0001", jobid="SLURM_JOB10:0:es18kxe-co-client")
    assert job.fields["write_bytes"] == 11025514496
    assert job.fields["write_calls"] == 861
    assert job.fields["write_usecs"] == 7304967
    assert job.fields["read_bytes"] == 0 and job.fields["read_calls"] == 0
    assert job.fields["punch"] == 85 and job.fields["punch_usecs"] == 16840
    # counters still at zero are left out, as Lustre leaves them out of its stats files
    assert "getattr" not in job.fields
    # the same file also has an unquoted id SLURM_JOB10 (a different job)
    other = one(points, "ost_job", target="OST0001", jobid="SLURM_JOB10")
    assert other.fields["write_bytes"] == 204800000
    assert len(points_of(points, "ost_job")) == 16


def test_212_layout_capacity_in_sysfs_brw_in_procfs_osd(tmp_path):
    root = build_release_root(tmp_path, "2.12")
    assert root.joinpath("proc/fs/lustre/osd-zfs/lquake-OST0000/brw_stats").exists()
    rnd, points = collect_root(root, TS)
    assert rnd.errors == 0
    # llnl-lmt/2.12.9_12.llnl/obdfilter.lquake-OST0000.stats.txt
    # write_bytes 2400 samples [bytes] 1048576 1048576 2516582400; statfs 1626647 [reqs]
    ost = one(points, "ost", fs="lquake", target="OST0000")
    assert ost.fields["write_bytes"] == 2516582400
    assert ost.fields["write_calls"] == 2400
    assert ost.fields["statfs"] == 1626647
    assert ost.fields["destroy"] == 20 and ost.fields["create"] == 33
    assert "read_bytes" not in ost.fields  # no reads: Lustre printed no read_bytes line
    assert ost.fields["kbytes_total"] == 47168367616
    # osd-zfs.lquake-OST0000.brw_stats.txt: "pages per bulk r/w" 256: 0 | 2400
    brw = one(points, "brw", target="OST0000", section="pages_per_bulk_rw", bucket="256")
    assert brw.fields == {"read_ios": 0, "write_ios": 2400}


def test_210_layout_everything_in_procfs_and_duplicate_statfs_added(tmp_path):
    root = build_release_root(tmp_path, "2.10")
    assert root.joinpath("proc/fs/lustre/obdfilter/lquake-OST0000/kbytestotal").exists()
    assert root.joinpath("proc/fs/lustre/obdfilter/lquake-OST0000/brw_stats").exists()
    rnd, points = collect_root(root, TS)
    assert rnd.errors == 0
    # llnl-lmt/2.10.8/obdfilter.lquake-OST0000.stats.txt
    ost = one(points, "ost", fs="lquake", target="OST0000")
    # read_bytes 7688839 samples [bytes] 4096 1048576 2092334829568
    assert ost.fields["read_bytes"] == 2092334829568
    assert ost.fields["read_calls"] == 7688839
    # write_bytes 5370989 samples [bytes] 1 1048576 2798370021441
    assert ost.fields["write_bytes"] == 2798370021441
    assert ost.fields["write_calls"] == 5370989
    # statfs is printed twice (1218621 and 297051 samples): both layers count
    assert ost.fields["statfs"] == 1218621 + 297051
    assert ost.fields["preprw"] == 13059828
    assert ost.fields["ping"] == 1285673
    assert ost.fields["kbytes_free"] == 47029440512
    # obdfilter.lquake-OST0000.brw_stats.ldiskfs.txt, "pages per bulk r/w":
    # 1: 5713132 74 74 | 276485 5 5 ; 256: 1973261 25 100 | 2650680 49 100
    first = one(points, "brw", section="pages_per_bulk_rw", bucket="1")
    assert first.fields == {"read_ios": 5713132, "write_ios": 276485}
    last = one(points, "brw", section="pages_per_bulk_rw", bucket="256")
    assert last.fields == {"read_ios": 1973261, "write_ios": 2650680}
    # hpe-lustre_exporter/obdfilter.lustrefs-OST0000.job_stats.txt (2.10.1): numeric job ids
    jobs = points_of(points, "ost_job", target="OST0000")
    assert len(jobs) == 35  # 35 `- job_id:` blocks (SOURCES.md says 28)


def test_210_job_stats_numbers(tmp_path):
    root = build_release_root(tmp_path, "2.10")
    _, points = collect_root(root, TS)
    # hpe-lustre_exporter/obdfilter.lustrefs-OST0000.job_stats.txt, first job:
    # - job_id: 24
    #   write_bytes: { samples: 64575, unit: bytes, min: 4096, max: 4194304, sum: 215147593728 }
    #   punch: { samples: 1, unit: reqs }
    job = one(points, "ost_job", target="OST0000", jobid="24")
    assert job.fields == {
        "read_calls": 0,
        "read_bytes": 0,
        "write_calls": 64575,
        "write_bytes": 215147593728,
        "punch": 1,
    }
