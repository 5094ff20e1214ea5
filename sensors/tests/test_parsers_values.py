"""Single values, health_check, recovery_status, LNet, lctl framing, lnetctl YAML and the
obdfilter-survey summary, each against the real samples."""

from __future__ import annotations

import pytest

from sensors.parsers import (
    parse_health_check,
    parse_lctl_get_param,
    parse_lnet_stats,
    parse_lnet_table,
    parse_obdfilter_survey,
    parse_recovery_status,
    parse_single_value,
    parse_yaml_block,
)
from sensors.tests import fixture_text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.kbytestotal.txt", 47168367616),
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.kbytesfree.txt", 47029440512),
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.kbytesavail.txt", 47025124352),
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.filestotal.txt", 45927444),
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.filesfree.txt", 45927188),
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.num_exports.txt", 3),
        ("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.tot_granted.txt", 5947064320),
        ("telegraf-lustre2/obdfilter.fs-OST0001.eviction_count.txt", 303),
        ("telegraf-lustre2/mgs.MGS.eviction_count.txt", 202),
        ("hpe-lustre_exporter/version.txt", "2.10.1"),
        ("llnl-lmt/2.15.4_1.llnl/version.txt", "2.15.4_1.llnl"),
    ],
)
def test_single_values(name, value):
    assert parse_single_value(fixture_text(name)) == value


def test_health_check_variants():
    assert parse_health_check(fixture_text("hpe-lustre_exporter/health_check.txt"))["healthy"]
    assert parse_health_check(fixture_text("telegraf-lustre2/health_check.txt"))["healthy"]
    params = dict(
        parse_lctl_get_param(
            fixture_text(
                "whamcloud-lustre-collector/lctl-get_param.ex8761.not-healthy.mdt-job_stats.txt"
            )
        )
    )
    sick = parse_health_check(params["health_check"])
    assert sick == {"healthy": False, "status": "NOT HEALTHY", "unhealthy_devices": []}
    old = parse_health_check("device lustre-OST0001 reported unhealthy\nNOT HEALTHY\n")
    assert old["unhealthy_devices"] == ["lustre-OST0001"]


def test_recovery_status_in_every_state():
    done = parse_recovery_status(
        fixture_text("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.recovery_status.txt")
    )
    assert done["status"] == "COMPLETE"
    assert done["recovery_start"] == 1510605701
    assert done["completed_clients"] == "1/1"
    assert done["last_transno"] == 8589934592
    inactive = parse_recovery_status(
        fixture_text("hpe-lustre_exporter/mdt.lustrefs-MDT0000.recovery_status.txt")
    )
    assert inactive == {"status": "INACTIVE"}
    params = dict(
        parse_lctl_get_param(
            fixture_text("whamcloud-lustre-collector/lctl-get_param.recovery_status.recovering.txt")
        )
    )
    recovering = parse_recovery_status(params["mdt.fs-MDT0002.recovery_status"])
    assert recovering["status"] == "RECOVERING"
    assert recovering["time_remaining"] == 119
    assert recovering["connected_clients"] == "3/7"
    waiting = dict(
        parse_lctl_get_param(
            fixture_text(
                "whamcloud-lustre-collector/lctl-get_param.recovery_status.waiting_for_clients.txt"
            )
        )
    )
    assert parse_recovery_status(waiting["obdfilter.fs-OST0004.recovery_status"]) == {
        "status": "WAITING_FOR_CLIENTS"
    }


def test_lnet_stats_line():
    stats = parse_lnet_stats(fixture_text("llnl-lmt/2.15.4_1.llnl/lnet.stats.txt"))
    assert stats["send_count"] == 2543354
    assert stats["recv_length"] == 574810488
    assert stats["drop_length"] == 2080
    old = parse_lnet_stats(fixture_text("hpe-lustre_exporter/lnet.stats.txt"))
    assert old["recv_length"] == 53029565353720


def test_lnet_peer_and_ni_tables():
    peers = parse_lnet_table(fixture_text("lustre-manual/lnet.peers.old-format.txt"))
    assert peers[1]["nid"] == "192.168.10.35@tcp"
    assert peers[1]["tx_min"] == "6"
    assert peers[1]["rtr_min"] == "8"
    nis = parse_lnet_table(fixture_text("lustre-manual/lnet.nis.old-format.txt"))
    assert nis[1] == {
        "nid": "192.168.10.34@tcp",
        "refs": "4",
        "peer": "8",
        "max": "256",
        "tx": "256",
        "min": "252",
    }


def test_lctl_get_param_framing():
    text = fixture_text(
        "whamcloud-lustre-collector/lctl-get_param.2.14.0_ddn144.oss-mds-mgs-client.txt"
    )
    params = parse_lctl_get_param(text)
    names = [name for name, _ in params]
    assert names[:4] == ["memused", "memused_max", "lnet_memused", "health_check"]
    values = dict(params)
    assert values["memused"] == "979131675\n"
    assert values["obdfilter.fs-OST0000.job_stats"] == "job_stats:\n"
    assert values["mdt.fs-MDT0000.exports.0@lo.uuid"].splitlines()[0] == (
        "f959e08c-e41e-4008-a027-652941b39f2e"
    )
    ok = parse_lctl_get_param(
        fixture_text("whamcloud-lustrefs-exporter/lctl-set_param.md_stats.ok.stdout.txt")
    )
    assert ok == [("mdt.fs-MDT0000.md_stats", "0\n"), ("mdt.fs-MDT0001.md_stats", "0\n")]


def test_lnetctl_yaml_output():
    nets = parse_yaml_block(
        fixture_text("whamcloud-lustrefs-exporter/lnetctl.net-show-v4.health.txt")
    )
    tcp = nets["net"][1]
    assert tcp["net type"] == "tcp"
    second = tcp["local NI(s)"][1]
    assert second["nid"] == "172.16.14.2@tcp"
    assert second["health stats"]["health value"] == 0
    assert second["statistics"]["send_count"] == 520788
    assert second["interfaces"] == {"0": "mlxen1"}
    assert second["CPT"] == "[0,1,2,3,4,5]"
    stats = parse_yaml_block(fixture_text("whamcloud-lustrefs-exporter/lnetctl.stats-show.txt"))
    assert stats["statistics"]["send_length"] == 261865376
    glob = parse_yaml_block(fixture_text("whamcloud-lustrefs-exporter/lnetctl.global-show.txt"))
    assert glob["global"]["transaction_timeout"] == 150


def test_obdfilter_survey_summary_both_bracket_styles():
    survey = parse_obdfilter_survey(
        fixture_text("obdfilter-survey/lustre-manual.disk-10ost.2015.summary.txt")
    )
    assert survey["header"].endswith("Obdfilter-survey for case=disk from hds1fnb6123")
    row = survey["rows"][0]
    assert (row["ost"], row["size_kib"], row["rsz_kib"], row["obj"], row["thr"]) == (
        10,
        167772160,
        1024,
        10,
        10,
    )
    assert row["tests"]["write"] == {"mb_s": 10982.73, "min": 601.97, "max": 2912.91, "flag": None}
    assert row["tests"]["read"]["max"] == 2634.87
    loose = parse_obdfilter_survey(
        fixture_text("obdfilter-survey/readme-example.one-test.summary-line.txt")
    )
    assert loose["rows"][0]["tests"]["write"]["min"] == 64.0
    flagged = parse_obdfilter_survey(
        "ost  1 sz 16777216K rsz 1024K obj    1 thr    1 write  412.03             ERROR "
        "rewrite  398.77 [ 376.00,  433.00] read  505.12 [ 487.00,  522.00] \n"
    )
    assert flagged["rows"][0]["tests"]["write"]["flag"] == "ERROR"
    assert flagged["rows"][0]["tests"]["rewrite"]["min"] == 376.0
