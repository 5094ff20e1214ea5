"""Owners' accounting (`quota_slave.acct_*`) and the quota master's limits (`qmt.*.glb-*`):
the real 2.14 EXAScaler capture read into numbers, bad lines refused by number, and the points
the sensor writes. Expected values are read by hand from the sample text."""

from __future__ import annotations

import logging

import pytest

from sensors import rounds
from sensors.collect import Collector
from sensors.config import SensorConfig
from sensors.parsers import ParseError, parse_lctl_get_param
from sensors.quota import parse_quota_accounting, parse_quota_limits
from sensors.sample_trees import place, place_lctl_output
from sensors.tests import fixture_text
from sensors.tests.lp import collect_root, one, parse_lines, points_of

SCRAPE = "whamcloud-lustrefs-exporter/lctl-get_param.full-scrape.ai400x2.io_latency-quota.txt"


def scrape_params() -> dict[str, str]:
    return dict(parse_lctl_get_param(fixture_text(SCRAPE)))


def test_accounting_of_every_target_and_kind_in_the_real_capture():
    params = scrape_params()
    mdt_users = parse_quota_accounting(params["osd-ldiskfs.ai400x2-MDT0000.quota_slave.acct_user"])
    assert mdt_users == [(0, 10214128, 2416855), (23, 102141328, 241123355)]
    ost1_groups = parse_quota_accounting(
        params["osd-ldiskfs.ai400x2-OST0001.quota_slave.acct_group"]
    )
    assert ost1_groups == [(0, 3255431104, 3718)]
    ost0_projects = parse_quota_accounting(
        params["osd-ldiskfs.ai400x2-OST0000.quota_slave.acct_project"]
    )
    assert ost0_projects == [(0, 3184221836, 3721)]


def test_quota_master_limits_in_the_real_capture():
    params = scrape_params()
    for resource in ("dt", "md"):
        for index in ("glb-usr", "glb-grp", "glb-prj"):
            limits = parse_quota_limits(params[f"qmt.ai400x2-QMT0000.{resource}-0x0.{index}"])
            # id 0 carries no limit; its `time` is the grace period: one week
            assert limits == [(0, {"hard": 0, "soft": 0, "granted": 0, "time": 604800})]


def test_limits_of_owners_with_a_quota_and_one_in_grace():
    text = (
        "global_pool0_dt_usr\n"
        "- id:      0\n"
        "  limits:  { hard:                    0, soft:                    0,"
        " granted:                    0, time:               604800 }\n"
        "- id:      1001\n"
        "  limits:  { hard:            104857600, soft:             94371840,"
        " granted:             99614720, time:           1764342000 }\n"
    )
    limits = dict(parse_quota_limits(text))
    assert limits[1001] == {
        "hard": 104857600,
        "soft": 94371840,
        "granted": 99614720,
        "time": 1764342000,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("usr_accounting:\n- id: 0\n  usage: { inodes: 1, kbytes: x }\n", "line 3"),
        ("usr_accounting:\n- id: 0\n- id: 1\n  usage: { inodes: 1, kbytes: 4 }\n", "line 2"),
        ("usr_accounting:\n  usage: { inodes: 1, kbytes: 4 }\n", "line 2"),
        ("usr_accounting:\n- id: 7\n  usage: { inodes: 1 }\n", "line 3: no kbytes"),
        ("usr_accounting:\n- id: 7\n", "line 2: id 7 has no usage line"),
        ("usr_accounting:\n- id: 7\n  limits: { hard: 1, soft: 1, granted: 0, time: 0 }\n", "3"),
    ],
)
def test_a_malformed_accounting_line_is_refused_by_its_number(text, message):
    with pytest.raises(ParseError, match=message):
        parse_quota_accounting(text)


def test_a_malformed_limits_line_is_refused_by_its_number():
    text = "global_pool0_dt_usr\n- id: 0\n  limits: { hard: 0, soft: 0, granted: 0 }\n"
    with pytest.raises(ParseError, match="line 3: no time"):
        parse_quota_limits(text)


def test_the_sensor_writes_owner_usage_per_target_and_the_limits(tmp_path):
    place_lctl_output(tmp_path, fixture_text(SCRAPE), "2.15")
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    usage = points_of(points, "owner_usage")
    # 3 targets x 3 kinds, the MDT with two users
    assert len(usage) == 10
    user23 = one(points, "owner_usage", target="MDT0000", kind="user", id="23")
    assert user23.tags["fs"] == "ai400x2" and user23.tags["server"] == "oss01"
    assert user23.fields == {"kbytes": 102141328, "inodes": 241123355}
    ost1 = one(points, "owner_usage", target="OST0001", kind="project", id="0")
    assert ost1.fields == {"kbytes": 3255431104, "inodes": 3718}
    quota = points_of(points, "owner_quota")
    assert {(p.tags["kind"], p.tags["pool"], p.tags["id"]) for p in quota} == {
        ("user", "0x0", "0"),
        ("group", "0x0", "0"),
        ("project", "0x0", "0"),
    }
    # the block (dt, KiB) and inode (md) limits of one owner in one point
    assert quota[0].fields["kbytes_time"] == 604800
    assert quota[0].fields["inodes_time"] == 604800
    assert quota[0].fields["kbytes_hard"] == 0


def test_a_broken_accounting_file_is_reported_with_its_path_and_line(tmp_path, caplog):
    place_lctl_output(tmp_path, fixture_text(SCRAPE), "2.15")
    place(
        tmp_path,
        "osd-ldiskfs.ai400x2-OST0000.quota_slave.acct_user",
        "usr_accounting:\n- id: 0\n  usage: { inodes: many, kbytes: 4 }\n",
        "2.15",
    )
    rounds._last_logged.clear()
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = collect_root(tmp_path)
    assert rnd.errors == 1
    assert "ai400x2-OST0000/quota_slave/acct_user" in caplog.text
    assert "line 3" in caplog.text
    assert points_of(points, "owner_usage", target="OST0000", kind="user") == []
    assert points_of(points, "owner_usage", target="OST0000", kind="group")


def test_owners_are_read_once_per_usage_interval_not_every_round(tmp_path):
    place_lctl_output(tmp_path, fixture_text(SCRAPE), "2.15")
    collector = Collector(
        SensorConfig(root=str(tmp_path), server="mds01", collectors=("usage",), interval=10.0)
    )
    counts = []
    for tick in range(1_800_000_000_000, 1_800_000_130_000, 10_000):  # 13 rounds of 10 s
        rnd = collector.collect(tick)
        counts.append(len(points_of(parse_lines(rnd.lines), "owner_usage")))
        assert rnd.schedule == {"usage_interval": 60.0}
    assert counts == [10, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 10]
