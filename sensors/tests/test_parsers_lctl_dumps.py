"""Whole `lctl get_param` captures from real servers: every parameter is split off correctly
and each kind of value is read by its parser, including one-line stats with no counters."""

from __future__ import annotations

import pytest

from sensors.parsers import (
    parse_brw_stats,
    parse_health_check,
    parse_job_stats,
    parse_lctl_get_param,
    parse_recovery_status,
    parse_single_value,
    parse_stats,
)
from sensors.tests import FIXTURES, fixture_text

DUMPS = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("*/lctl-get_param.*"))


def parse_value(name: str, value: str):
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "brw_stats":
        return parse_brw_stats(value)
    if leaf == "job_stats":
        return parse_job_stats(value)
    if leaf in ("stats", "md_stats"):
        return parse_stats(value)
    if leaf == "recovery_status":
        return parse_recovery_status(value)
    if leaf == "health_check":
        return parse_health_check(value)
    if leaf in (
        "kbytestotal",
        "kbytesfree",
        "kbytesavail",
        "filestotal",
        "filesfree",
        "memused",
        "memused_max",
        "lnet_memused",
        "num_exports",
    ):
        return parse_single_value(value)
    return None


@pytest.mark.parametrize("name", DUMPS)
def test_every_parameter_of_a_capture_parses(name):
    params = parse_lctl_get_param(fixture_text(name))
    assert params
    for param, value in params:
        parse_value(param, value)


def test_values_read_by_hand_from_an_exascaler_node():
    params = dict(
        parse_lctl_get_param(
            fixture_text("whamcloud-lustre-collector/lctl-get_param.ai400x2.mds-oss.txt")
        )
    )
    stats = parse_stats(params["obdfilter.ai400x2-OST0000.stats"])
    assert stats["counters"]["create"] == {
        "samples": 4,
        "unit": "usecs",
        "min": 419,
        "max": 36248,
        "sum": 71884,
        "sumsq": 2404689422,
    }
    # a service with no counters is printed on the `name=` line itself
    empty = parse_stats(params["mds.MDS.mdt_io.stats"])
    assert empty["counters"] == {}
    assert empty["snapshot_time"] == pytest.approx(1709915907.132570592)
    assert parse_job_stats(params["obdfilter.ai400x2-OST0000.job_stats"]) == []


def test_values_read_by_hand_from_a_2_14_client():
    params = dict(
        parse_lctl_get_param(
            fixture_text("whamcloud-lustre-collector/lctl-get_param.2.14.0.client.llite.txt")
        )
    )
    assert parse_single_value(params["memused"]) == 35721854085
    ldlm = parse_stats(params["ldlm.services.ldlm_cbd.stats"])
    assert ldlm["counters"]["req_timeout"]["unit"] == "secs"
    assert ldlm["counters"]["ldlm_bl_callback"]["sum"] == 446351106
