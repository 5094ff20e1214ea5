"""A file that fails to parse is reported (logged, counted in `sensor.parse_errors`) and
skipped; it never stops the other files or collectors."""

from __future__ import annotations

import logging

from sensors import lustre, rounds
from sensors.sample_trees import place
from sensors.tests.lp import collect_root, one, points_of
from sensors.tests.roots import build_release_root

TS = 1_700_000_000_000


def test_broken_files_are_skipped_and_counted_and_the_rest_is_collected(tmp_path, caplog):
    root = build_release_root(tmp_path, "2.15")
    # OST0000: stats and brw_stats garbled (a truncated read, a kernel bug, a new format)
    place(root, "obdfilter.lflood-OST0000.stats", "snapshot_time 1 secs.nsecs\nrubbish\n", "2.15")
    place(root, "osd-zfs.lflood-OST0000.brw_stats", "not | a table\n", "2.15")
    place(root, "obdfilter.lflood-OST0000.kbytesfree", "lots\n", "2.15")
    place(root, "lnet.stats", "1 2 3\n", "2.15")
    place(root, "obdfilter.lflood-OST0001.job_stats", "job_stats:\nnot a job\n", "2.15")
    rounds._last_logged.clear()
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = collect_root(root, TS)
    assert rnd.errors == 5
    logged = caplog.text
    assert "lflood-OST0000/stats" in logged and "(skipped)" in logged
    assert "lflood-OST0000/brw_stats" in logged
    assert "lnet/stats" in logged and "kbytesfree" in logged and "job_stats" in logged
    # what could be read of OST0000 is still there (capacity from its other files)
    ost0 = one(points, "ost", target="OST0000")
    assert "create" not in ost0.fields and "kbytes_free" not in ost0.fields
    assert ost0.fields["kbytes_total"] == 47168367616
    assert points_of(points, "brw", target="OST0000") == []
    # OST0001, the MDT, the OSS services and the node are untouched
    assert one(points, "ost", target="OST0001").fields["write_bytes"] == 1786842710016
    assert points_of(points, "ost_job") == []
    assert one(points, "mdt", target="MDT0000").fields["getattr"] == 2644
    assert points_of(points, "oss_service")
    assert points_of(points, "lnet") == []
    # the sensor's own point says how many were skipped
    rnd.add("sensor", {}, {"parse_errors": rnd.errors})
    assert "parse_errors=5i" in rnd.lines[-1]


def test_the_same_broken_file_is_logged_once_per_interval_but_counted_every_round(tmp_path, caplog):
    place(tmp_path, "lnet.stats", "garbage\n", "2.15")
    rounds._last_logged.clear()
    with caplog.at_level(logging.WARNING, logger="sensors"):
        first, _ = collect_root(tmp_path, TS)
        second, _ = collect_root(tmp_path, TS + 10_000)
    assert first.errors == second.errors == 1
    assert caplog.text.count("lnet/stats") == 1


def test_a_failing_collector_does_not_stop_the_others(tmp_path, monkeypatch, caplog):
    root = build_release_root(tmp_path, "2.15")

    def broken(*_args):
        raise RuntimeError("a bug in one collector")

    monkeypatch.setattr("sensors.collect.collect_oss_services", broken)
    rounds._last_logged.clear()
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = collect_root(root, TS)
    assert rnd.errors == 1
    assert "collector oss_service" in caplog.text
    assert points_of(points, "oss_service") == []
    assert points_of(points, "ost") and points_of(points, "lnet") and points_of(points, "node")
    assert lustre.collect_oss_services is not broken
