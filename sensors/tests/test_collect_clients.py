"""Each target's clients: `obdfilter.<target>.exports.<nid>.stats` and
`mdt.<target>.exports.<nid>.stats` as `ost_client` and `mdt_client`, per NID, the fields named
as the target's own. Expected values are read by hand from the real samples."""

from __future__ import annotations

import logging

from sensors import rounds
from sensors.collect import Collector
from sensors.config import SensorConfig
from sensors.sample_trees import place, place_lctl_output
from sensors.tests import fixture_text
from sensors.tests.lp import STATIC, collect_root, one, parse_lines, points_of

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


def test_an_idle_export_is_not_written_again_and_one_that_moves_again_is_counted_whole(
    tmp_path,
):
    """2,000 clients on 2,400 OSTs would be 4.8 million points a read, most of them unchanged:
    only the exports that moved are written; one that moves after being idle gets its unchanged
    value at the last read too, so a window starting while it was idle counts its first bytes."""
    name = "obdfilter.fs-OST0000.exports.{nid}.stats"

    def stats(written: int) -> str:
        return (
            "snapshot_time             1700000000.000000000 secs.nsecs\n"
            f"write_bytes               {written // 4096} samples [bytes] 4096 4096 {written}\n"
        )

    def place_both(busy: int, idle: int) -> None:
        place(tmp_path, name.format(nid="169.254.100.1@tcp"), stats(busy), "2.14")
        place(tmp_path, name.format(nid="169.254.100.2@tcp"), stats(idle), "2.14")

    settings = {"root": str(tmp_path), "server": "oss01", "tags": dict(STATIC)}
    collector = Collector(SensorConfig(**settings, interval=1, intervals={"exports": 1}))
    written = []
    for second, (busy, idle) in enumerate(
        [(4096, 8192), (8192, 8192), (12288, 8192), (12288, 16384)]
    ):
        place_both(busy, idle)
        rnd = collector.collect(1_700_000_000_000 + 1000 * second)
        written.append(
            sorted(
                (p.tags["client"][-5], p.timestamp, p.fields["write_bytes"])
                for p in points_of(parse_lines(rnd.lines), "ost_client")
            )
        )
    first, busy_only, still_busy, idle_moves = written
    assert [(c, b) for c, _, b in first] == [("1", 4096), ("2", 8192)]
    assert [(c, b) for c, _, b in busy_only] == [("1", 8192)]
    assert [(c, b) for c, _, b in still_busy] == [("1", 12288)]
    # The busy one stopped (nothing); the idle one moved: its old value at the last read first.
    assert [(c, t, b) for c, t, b in idle_moves] == [
        ("2", 1_700_000_002_000, 8192),
        ("2", 1_700_000_003_000, 16384),
    ]
