"""Each target's clients: `obdfilter.<target>.exports.<nid>.stats` and
`mdt.<target>.exports.<nid>.stats` as `ost_client` and `mdt_client`, per NID, the fields named
as the target's own. Expected values are read by hand from the real samples."""

from __future__ import annotations

import logging

from sensors import rounds
from sensors.sample_trees import place, place_lctl_output
from sensors.tests import fixture_text
from sensors.tests.lp import collect_root, one, points_of

DDN144 = "whamcloud-lustre-collector/lctl-get_param.2.14.0_ddn144.oss-mds-mgs-client.txt"


def test_per_client_stats_of_an_ost_and_an_mdt_on_2_10(tmp_path):
    place(
        tmp_path,
        "obdfilter.lustrefs-OST0000.exports.172.20.20.2@o2ib.stats",
        fixture_text(
            "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.exports.172.20.20.2-o2ib.stats.txt"
        ),
        "2.10",
    )
    place(
        tmp_path,
        "mdt.lustrefs-MDT0000.exports.172.20.20.4@o2ib.stats",
        fixture_text("hpe-lustre_exporter/mdt.lustrefs-MDT0000.exports.172.20.20.4-o2ib.stats.txt"),
        "2.10",
    )
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    ost = one(points, "ost_client", fs="lustrefs", target="OST0000", client="172.20.20.2@o2ib")
    assert ost.fields == {"create": 2, "statfs": 35359, "ping": 1}
    mdt = one(points, "mdt_client", fs="lustrefs", target="MDT0000", client="172.20.20.4@o2ib")
    assert mdt.fields["open"] == 10 and mdt.fields["setattr"] == 57
    assert mdt.tags["server"] == "oss01" and mdt.tags["ssu"] == "ssu01"


def test_a_clients_bytes_on_a_2_12_ost(tmp_path):
    place(
        tmp_path,
        "obdfilter.OST0001.exports.10.2.4.27@o2ib1.stats",
        fixture_text("telegraf-lustre2/obdfilter.OST0001.exports.10.2.4.27-o2ib1.stats.txt"),
        "2.12",
    )
    _, points = collect_root(tmp_path)
    client = one(points, "ost_client", target="OST0001", client="10.2.4.27@o2ib1")
    assert client.fields["write_bytes"] == 15201500833981
    assert client.fields["write_calls"] == 71893382
    assert client.fields["read_bytes"] == 78026117632000
    # how often the client came and went (a flapping client shows here)
    assert (client.fields["connect"], client.fields["reconnect"]) == (1117, 1160)
    assert client.fields["disconnect"] == 1084


def test_every_client_of_every_target_in_a_2_14_capture(tmp_path):
    place_lctl_output(tmp_path, fixture_text(DDN144), "2.14")
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    # obdfilter.fs-OST0000.exports.0@lo.stats: create 2 samples sum 8324 usecs, statfs 339455
    ost = one(points, "ost_client", target="OST0000", client="0@lo")
    assert ost.fields["create"] == 2 and ost.fields["create_usecs"] == 8324
    assert ost.fields["statfs"] == 339455
    assert (
        one(points, "ost_client", target="OST0001", client="0@lo").fields["create_usecs"] == 25322
    )
    mdt = one(points, "mdt_client", target="MDT0000", client="0@lo")
    assert mdt.fields == {"getattr": 2, "getattr_usecs": 35, "statfs": 1704, "statfs_usecs": 30579}
    # the three tcp clients have counted nothing yet: no point (a point needs a field)
    assert points_of(points, "mdt_client", client="10.73.20.12@tcp") == []


def test_a_broken_client_file_costs_that_client_only(tmp_path, caplog):
    place_lctl_output(tmp_path, fixture_text(DDN144), "2.14")
    place(tmp_path, "obdfilter.fs-OST0001.exports.0@lo.stats", "create lots\n", "2.14")
    rounds._last_logged.clear()
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = collect_root(tmp_path)
    assert rnd.errors == 1
    assert "fs-OST0001/exports/0@lo/stats" in caplog.text
    assert points_of(points, "ost_client", target="OST0001") == []
    assert points_of(points, "ost_client", target="OST0000")
