"""The node collectors: CPU, memory, load and Lustre health (`node`), LNet counters (`lnet`)
where each release keeps them, and the OSS request services (`oss_service`)."""

from __future__ import annotations

import pytest

from sensors.parsers import parse_lctl_get_param
from sensors.sample_trees import place
from sensors.tests import fixture_text
from sensors.tests.lp import collect_root, one, points_of
from sensors.tests.roots import build_release_root

TS = 1_700_000_000_000

PROC_STAT = """\
cpu  4705 150 1120 16250 520 0 12 0 0 0
cpu0 2352 75 560 8125 260 0 6 0 0 0
cpu1 2353 75 560 8125 260 0 6 0 0 0
intr 114930548 113199788 3 0 5 263 0 4 [... 1000 more]
ctxt 1990473
btime 1062191376
processes 2915
procs_running 1
procs_blocked 0
"""
MEMINFO = """\
MemTotal:       196608000 kB
MemFree:         1024000 kB
MemAvailable:   150000000 kB
Buffers:          204800 kB
Cached:         120000000 kB
SwapCached:            0 kB
"""
LOADAVG = "3.25 2.50 1.75 2/345 12345\n"


def _node_files(root):
    proc = root / "proc"
    proc.mkdir(parents=True, exist_ok=True)
    (proc / "stat").write_text(PROC_STAT)
    (proc / "meminfo").write_text(MEMINFO)
    (proc / "loadavg").write_text(LOADAVG)


def test_node_cpu_memory_load_and_health(tmp_path):
    root = build_release_root(tmp_path, "2.15")
    _node_files(root)
    rnd, points = collect_root(root, TS)
    assert rnd.errors == 0
    node = one(points, "node", server="oss01")
    assert node.tags["role"] == "oss"  # it serves OSTs (and here an MDT too, as in the samples)
    assert node.fields["cpu_user"] == 4705
    assert node.fields["cpu_system"] == 1120
    assert node.fields["cpu_idle"] == 16250
    assert node.fields["cpu_iowait"] == 520
    assert node.fields["mem_total_kb"] == 196608000
    assert node.fields["mem_available_kb"] == 150000000
    assert (node.fields["load1"], node.fields["load5"], node.fields["load15"]) == (3.25, 2.5, 1.75)
    # hpe-lustre_exporter/health_check.txt: "healthy", in sys/fs/lustre/
    assert node.fields["lustre_healthy"] == 1


def test_node_not_healthy_from_a_real_capture(tmp_path):
    text = fixture_text(
        "whamcloud-lustre-collector/lctl-get_param.ex8761.not-healthy.mdt-job_stats.txt"
    )
    params = dict(parse_lctl_get_param(text))
    assert params["health_check"].strip() == "NOT HEALTHY"
    place(tmp_path, "health_check", params["health_check"], "2.14")
    _, points = collect_root(tmp_path, TS, role="mds")
    node = one(points, "node")
    assert node.fields == {"lustre_healthy": 0}
    assert node.tags["role"] == "mds"  # configured role wins


def test_node_old_procfs_health_with_device_lines(tmp_path):
    place(
        tmp_path, "health_check", "device lustre-OST0000 reported unhealthy\nNOT HEALTHY\n", "2.9"
    )
    assert (tmp_path / "proc/fs/lustre/health_check").exists()
    _, points = collect_root(tmp_path, TS)
    assert one(points, "node").fields["lustre_healthy"] == 0


@pytest.mark.parametrize(
    ("release", "sample", "path", "expected"),
    [
        # llnl-lmt/2.10.8/lnet.stats.txt:
        # 0 49 0 10184657 10187015 0 265 2110209744 2463988616 0 137800
        (
            "2.10",
            "llnl-lmt/2.10.8/lnet.stats.txt",
            "proc/sys/lnet/stats",
            {
                "msgs_max": 49,
                "send_count": 10184657,
                "recv_count": 10187015,
                "drop_count": 265,
                "send_bytes": 2110209744,
                "recv_bytes": 2463988616,
                "drop_bytes": 137800,
                "errors": 0,
            },
        ),
        # llnl-lmt/2.12.9_12.llnl/lnet.stats.txt: 0 21 0 2175 2175 0 0 531856 565232 0 0
        (
            "2.12",
            "llnl-lmt/2.12.9_12.llnl/lnet.stats.txt",
            "sys/kernel/debug/lnet/stats",
            {"send_count": 2175, "recv_count": 2175, "send_bytes": 531856, "recv_bytes": 565232},
        ),
        # llnl-lmt/2.15.4_1.llnl/lnet.stats.txt:
        # 0 11 0 2543354 2543339 0 4 637856992 574810488 0 2080
        (
            "2.15",
            "llnl-lmt/2.15.4_1.llnl/lnet.stats.txt",
            "sys/kernel/debug/lnet/stats",
            {"send_count": 2543354, "drop_count": 4, "drop_bytes": 2080, "recv_bytes": 574810488},
        ),
    ],
)
def test_lnet_counters_where_each_release_keeps_them(tmp_path, release, sample, path, expected):
    place(tmp_path, "lnet.stats", fixture_text(sample), release)
    assert (tmp_path / path).exists()
    rnd, points = collect_root(tmp_path, TS)
    assert rnd.errors == 0
    lnet = one(points, "lnet", server="oss01")
    assert {k: lnet.fields[k] for k in expected} == expected
    assert len(lnet.fields) == 11


@pytest.mark.parametrize("release", ["2.10", "2.15"])
def test_oss_service_request_counters(tmp_path, release):
    place(
        tmp_path,
        "ost.OSS.ost_io.stats",
        fixture_text("hpe-lustre_exporter/ost.OSS.ost_io.stats.txt"),
        release,
    )
    place(
        tmp_path,
        "ost.OSS.ost.stats",
        fixture_text("hpe-lustre_exporter/ost.OSS.ost.stats.txt"),
        release,
    )
    rnd, points = collect_root(tmp_path, TS)
    assert rnd.errors == 0
    # hpe-lustre_exporter/ost.OSS.ost_io.stats.txt
    io = one(points, "oss_service", service="ost_io")
    # req_waittime 4298835 samples [usec] 4 6360 135895464 ...
    assert io.fields["req_waittime"] == 4298835
    assert io.fields["req_waittime_usecs"] == 135895464
    # req_active 4298835 samples [reqs] 1 12 8137871 ...: mean active = sum / samples
    assert io.fields["req_active_sum"] == 8137871
    # req_qdepth ... 0 4 1751 ; req_timeout ... [sec] 1 31 9512913
    assert io.fields["req_qdepth_sum"] == 1751
    assert io.fields["req_timeout_secs"] == 9512913
    # ost_write 4298777 samples [usec] 71 684976 13836421716
    assert io.fields["ost_write"] == 4298777
    assert io.fields["ost_write_usecs"] == 13836421716
    assert "fs" not in io.tags and io.tags["server"] == "oss01"
    # hpe-lustre_exporter/ost.OSS.ost.stats.txt: obd_ping 2076 samples [usec] 3 75 34387
    ost = one(points, "oss_service", service="ost")
    assert ost.fields["obd_ping"] == 2076 and ost.fields["obd_ping_usecs"] == 34387


def test_missing_files_are_not_errors(tmp_path):
    """An empty root (Lustre not loaded, no /proc): only the sensor's own point."""
    rnd, points = collect_root(tmp_path, TS)
    assert rnd.errors == 0
    assert points_of(points, "ost") == [] and points_of(points, "lnet") == []
    assert points_of(points, "node") == []
