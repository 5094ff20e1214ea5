"""The MDT collector: md_stats of 2.15/2.12/2.10, capacity found in the OSD's directory, MDT
job_stats of several eras. Numbers read by hand from the named sample files."""

from __future__ import annotations

from sensors.parsers import parse_lctl_get_param
from sensors.sample_trees import place
from sensors.tests import fixture_text
from sensors.tests.lp import collect_root, one, points_of
from sensors.tests.roots import build_release_root

TS = 1_700_000_000_000


def test_215_md_stats_counts_and_latencies(tmp_path):
    root = build_release_root(tmp_path, "2.15")
    rnd, points = collect_root(root, TS)
    assert rnd.errors == 0
    # llnl-lmt/2.15.4_1.llnl/mdt.lflood-MDT0000.md_stats.txt
    # getattr 2644 samples [usecs] 0 69 31018 655468 ; statfs 302669 samples [usecs] 0 33 652583
    mdt = one(points, "mdt", fs="lflood", target="MDT0000")
    assert mdt.fields["getattr"] == 2644
    assert mdt.fields["getattr_usecs"] == 31018
    assert mdt.fields["statfs"] == 302669
    assert mdt.fields["statfs_usecs"] == 652583
    # capacity lives under sys/fs/lustre/osd-zfs/lflood-MDT0000/ (no kbytes in mdt/ here)
    assert root.joinpath("sys/fs/lustre/osd-zfs/lflood-MDT0000/kbytestotal").exists()
    assert mdt.fields["kbytes_total"] == 47168367616
    assert mdt.fields["files_free"] == 45927188


def test_210_md_stats_all_sixteen_counters(tmp_path):
    root = build_release_root(tmp_path, "2.10")
    _, points = collect_root(root, TS)
    # llnl-lmt/2.10.8/mdt.lquake-MDT0000.md_stats.txt ([reqs], counts only)
    mdt = one(points, "mdt", fs="lquake", target="MDT0000")
    expected = {
        "open": 24698433,
        "close": 24695036,
        "mknod": 14335868,
        "link": 10,
        "unlink": 14335582,
        "mkdir": 13347076,
        "rmdir": 13347066,
        "rename": 412,
        "getattr": 47436738,
        "setattr": 144733,
        "getxattr": 76058499,
        "setxattr": 10,
        "statfs": 138675,
        "sync": 15,
        "samedir_rename": 387,
        "crossdir_rename": 25,
    }
    assert {k: v for k, v in mdt.fields.items() if k in expected} == expected
    assert mdt.fields["kbytes_avail"] == 47025124352  # from proc/fs/lustre/osd-ldiskfs/


def test_212_md_stats(tmp_path):
    root = build_release_root(tmp_path, "2.12")
    _, points = collect_root(root, TS)
    # llnl-lmt/2.12.9_12.llnl/mdt.lquake-MDT0000.md_stats.txt
    mdt = one(points, "mdt", target="MDT0000")
    assert (mdt.fields["getattr"], mdt.fields["getxattr"], mdt.fields["statfs"]) == (
        1233,
        250,
        1525058,
    )


def test_mdt_recovery_status_and_job_stats_of_210(tmp_path):
    place(
        tmp_path,
        "mdt.lustrefs-MDT0000.md_stats",
        fixture_text("hpe-lustre_exporter/mdt.lustrefs-MDT0000.md_stats.txt"),
        "2.10",
    )
    place(
        tmp_path,
        "mdt.lustrefs-MDT0000.job_stats",
        fixture_text("hpe-lustre_exporter/mdt.lustrefs-MDT0000.job_stats.txt"),
        "2.10",
    )
    place(
        tmp_path,
        "mdt.lustrefs-MDT0000.recovery_status",
        fixture_text("hpe-lustre_exporter/mdt.lustrefs-MDT0000.recovery_status.txt"),
        "2.10",
    )
    rnd, points = collect_root(tmp_path, TS)
    assert rnd.errors == 0
    # hpe-lustre_exporter/mdt.lustrefs-MDT0000.md_stats.txt: open 10, close 9, setattr 57
    mdt = one(points, "mdt", fs="lustrefs", target="MDT0000")
    assert (mdt.fields["open"], mdt.fields["close"], mdt.fields["setattr"]) == (10, 9, 57)
    assert mdt.fields["recovery_status"] == "INACTIVE"
    # mdt.lustrefs-MDT0000.job_stats.txt: job 43 has only `setattr: { samples: 1 }`
    job = one(points, "mdt_job", target="MDT0000", jobid="43")
    assert job.fields == {"setattr": 1}


def test_mdt_job_stats_quoted_ids_with_colons(tmp_path):
    text = fixture_text(
        "whamcloud-lustrefs-exporter/lctl-get_param.mdt-job_stats.exascaler.quoted-jobid.txt"
    )
    placed = [place(tmp_path, name, value, "2.15") for name, value in parse_lctl_get_param(text)]
    assert all(placed)
    rnd, points = collect_root(tmp_path, TS)
    assert rnd.errors == 0
    # two filesystems' MDTs, each with - job_id: "node_exporter:989:es-2-virt3-co" whose
    # statfs: { samples: 326, ... sum: 5528 } on es01a and { samples: 326, ... sum: 3714 } on es02a
    node_exporter = "node_exporter:989:es-2-virt3-co"
    job = one(points, "mdt_job", fs="es01a", target="MDT0000", jobid=node_exporter)
    assert job.fields == {"statfs": 326, "statfs_usecs": 5528}
    job = one(points, "mdt_job", fs="es02a", target="MDT0000", jobid=node_exporter)
    assert job.fields == {"statfs": 326, "statfs_usecs": 3714}
    # - job_id: "vi:0:es-2-virt3-cosp": open 4 (sum 1712), close 4 (195), unlink 3 (609)
    vi = one(points, "mdt_job", fs="es01a", jobid="vi:0:es-2-virt3-cosp")
    assert vi.fields["open"] == 4 and vi.fields["open_usecs"] == 1712
    assert vi.fields["close"] == 4 and vi.fields["close_usecs"] == 195
    assert vi.fields["unlink"] == 3 and vi.fields["unlink_usecs"] == 609
    assert "link" not in vi.fields


def test_mdt_job_stats_of_214_usecs_with_sumsq(tmp_path):
    text = fixture_text("whamcloud-lustre-collector/mdt.job_stats.touch.0.2021-03.usecs-sumsq.txt")
    place(tmp_path, "mdt.fs-MDT0000.job_stats", text, "2.14")
    rnd, points = collect_root(tmp_path, TS)
    assert rnd.errors == 0
    # - job_id: touch.0: open 1 (315 usecs), close 1 (19), mknod 1 (296), setattr 1 (27)
    job = one(points, "mdt_job", fs="fs", target="MDT0000", jobid="touch.0")
    assert job.fields == {
        "open": 1,
        "open_usecs": 315,
        "close": 1,
        "close_usecs": 19,
        "mknod": 1,
        "mknod_usecs": 296,
        "setattr": 1,
        "setattr_usecs": 27,
    }
    # with no md_stats and no capacity files, the MDT has nothing to report but its jobs
    assert points_of(points, "mdt") == []
