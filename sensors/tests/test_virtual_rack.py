"""The sensor on the virtual rack (simulator/): the same code reads a virtual host's root as it
reads `/` on a real server, runs the host's ipmitool and the rack's SMcli, and reports what the
simulator's own `lctl` shows and the failures injected into the rack."""

from __future__ import annotations

import logging
import subprocess

import pytest

from sensors.collect import Collector
from sensors.config import load_config
from sensors.parsers import parse_stats
from sensors.tests.lp import collect_root, one, parse_lines, points_of
from sensors.tests.vrack import build_rack, host_config, simulator, status

ARRAYS = ["ssu001-a", "ssu001-b"]


@pytest.fixture(scope="module")
def busy_rack(tmp_path_factory):
    rack = build_rack(tmp_path_factory.mktemp("vrack") / "rack")
    simulator(rack, "scenario", "balanced")
    simulator(rack, "tick", "--seconds", "30")
    simulator(rack, "tick", "--seconds", "30")
    return rack


def collect_host(rack, host, tmp_path, arrays=None):
    config = load_config(host_config(rack, host, tmp_path / f"{host}.conf", arrays=arrays))
    rnd = Collector(config).collect(1_700_000_000_000)
    return rnd, parse_lines(rnd.lines)


def lctl(rack, host, *params) -> str:
    result = subprocess.run(
        [str(rack / "hosts" / host / "bin" / "lctl"), "get_param", "-n", *params],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


def test_an_oss_of_the_virtual_rack_is_read_like_a_real_one(busy_rack, tmp_path):
    rnd, points = collect_host(busy_rack, "oss001", tmp_path, arrays=ARRAYS)
    assert rnd.errors == 0
    mounted = status(busy_rack)["servers"]["oss001"]["targets"]
    osts = points_of(points, "ost", server="oss001")
    assert sorted(f"{p.tags['fs']}-{p.tags['target']}" for p in osts) == sorted(mounted)
    assert len(osts) == 12
    # the same numbers as the virtual host's own `lctl get_param`
    device = mounted[0]
    ost = one(points, "ost", target=device.split("-")[1])
    assert ost.fields["kbytes_total"] == int(
        lctl(busy_rack, "oss001", f"obdfilter.{device}.kbytestotal")
    )
    counters = parse_stats(lctl(busy_rack, "oss001", f"obdfilter.{device}.stats"))["counters"]
    assert ost.fields["write_bytes"] == counters["write_bytes"]["sum"] > 0
    assert ost.fields["write_calls"] == counters["write_bytes"]["samples"]
    assert ost.tags["ssu"] == "ssu001"
    assert points_of(points, "ost_job", target=ost.tags["target"])
    assert points_of(points, "brw", target=ost.tags["target"], section="disk_io_size")
    assert one(points, "node").tags["role"] == "oss"
    assert one(points, "node").fields["lustre_healthy"] == 1
    assert one(points, "lnet").fields["send_count"] > 0
    assert one(points, "oss_service", service="ost_io").fields["req_waittime"] > 0
    # the BMC through the host's ipmitool, the arrays through the rack's SMcli
    assert {p.tags["sensor"] for p in points_of(points, "bmc")} >= {"CPU1 Temp", "Fan1"}
    assert one(points, "bmc", sensor="PSU1 Power").tags["type"] == "power"
    drives = points_of(points, "array", component="drive")
    assert len(drives) == 240 and all(p.fields["ok"] == 1 for p in drives)
    assert len(points_of(points, "array", component="volume_group")) == 24
    assert len(points_of(points, "array", component="controller")) == 4


def test_an_mds_of_the_virtual_rack(busy_rack, tmp_path):
    rnd, points = collect_host(busy_rack, "mds01", tmp_path)
    assert rnd.errors == 0
    mdt = one(points, "mdt", fs="scratch", target="MDT0000")
    assert mdt.fields["open"] > 0 and mdt.fields["kbytes_total"] > 0
    assert points_of(points, "mdt_job")
    assert one(points, "node").tags["role"] == "mds"


def test_injected_failures_show_in_the_points(tmp_path, caplog):
    rack = build_rack(tmp_path / "rack")
    simulator(rack, "inject", "drive-failed", "--array", "ssu001-a", "--drive", "0,1,1")
    simulator(rack, "inject", "controller-failed", "--array", "ssu001-b", "--controller", "B")
    simulator(rack, "inject", "bmc-down", "--server", "oss001")
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = collect_host(rack, "oss001", tmp_path, arrays=ARRAYS)
    drive = one(points, "array", array="ssu001-a", component="drive", id="0,1,1")
    assert drive.fields == {"state": "failed", "ok": 0}
    group = one(points, "array", array="ssu001-a", component="volume_group", id="ssu001-a-vg00")
    assert group.fields == {"state": "degraded", "ok": 0}
    controller = one(points, "array", array="ssu001-b", component="controller", id="B")
    assert controller.fields == {"state": "failed", "ok": 0, "groups_not_ok": 0}
    assert one(points, "array", array="ssu001-a", component="controller", id="A").fields == {
        "state": "online",
        "ok": 1,
        "groups_not_ok": 1,  # the failed drive's group
    }
    # the BMC does not answer: reported and counted, the rest of the round is there
    assert rnd.errors == 1 and points_of(points, "bmc") == []
    assert "Could not open device" in caplog.text
    assert len(points_of(points, "ost")) == 12


def test_a_crashed_server_has_no_lustre_tree_and_that_is_not_an_error(tmp_path):
    rack = build_rack(tmp_path / "rack")
    simulator(rack, "inject", "server-crash", "--server", "oss002")
    rnd, points = collect_root(rack / "hosts" / "oss002")
    assert rnd.errors == 0
    assert points_of(points, "ost") == [] and points_of(points, "lnet") == []
