"""Where an OST's time goes, on numbers: slow at the array, a busy OSS, slow on the server's
side, or neither (``rules.slowness``)."""

from __future__ import annotations

import pytest

from portal.health.rules import slowness


def judged(**figures):
    given = {
        "target": "scratch-OST0003",
        "server": "oss01",
        "volume": "scratch-OST0003",
        "volume_group": "ssu01-a-vg03",
        "array": "ssu01-a",
        "array_ms": 2.0,
        "others_ms": 2.0,
        "service": 3.0,
        "other_osts_ms": 3.0,
        "cpu_percent": 20.0,
        "cpu_busy_percent": 90.0,
    }
    return slowness.diagnose(**{**given, **figures})


def test_a_volume_slow_at_the_array_is_named_with_its_neighbours_and_an_idle_oss():
    found = judged(array_ms=42.0, service=45.0, cpu_percent=12.0)
    assert found.verdict == slowness.SLOW_AT_ARRAY
    assert found.text == (
        "Slow at the array: volume scratch-OST0003 (ssu01-a-vg03) answers in 42 ms at the "
        "array (others 2.0 ms); the OSS oss01 is not busy (CPU 12 %, its other OSTs 3.0 ms); "
        "its service time at "
        "oss01 is 45 ms"
    )


def test_a_busy_oss_is_named_with_the_arrays_quick_answer():
    found = judged(array_ms=2.0, service=30.0, cpu_percent=95.0)
    assert found.verdict == slowness.BUSY_OSS
    assert found.text.startswith(
        "The OSS oss01 is busy (CPU 95 %), the array answers in 2.0 ms for volume "
        "scratch-OST0003 (ssu01-a-vg03)"
    )


def test_all_osts_of_an_oss_slow_while_the_array_is_quick_is_a_busy_oss():
    found = judged(array_ms=2.0, service=40.0, other_osts_ms=35.0, cpu_percent=50.0)
    assert found.verdict == slowness.BUSY_OSS
    assert "its other OSTs take 35 ms" in found.text


def test_one_ost_slow_at_its_server_alone_points_at_the_path():
    found = judged(array_ms=2.0, service=40.0, other_osts_ms=3.0, cpu_percent=20.0)
    assert found.verdict == slowness.SLOW_AT_SERVER
    assert "multipath" in found.text


def test_a_healthy_ost_is_neither():
    assert judged().verdict == slowness.NORMAL


def test_a_whole_slow_array_is_slow_at_the_array_though_its_volumes_are_alike():
    found = judged(array_ms=41.0, others_ms=40.0, cpu_percent=95.0)
    assert found.verdict == slowness.SLOW_AT_ARRAY
    assert "the OSS oss01 is busy too (CPU 95 %, its other OSTs 3.0 ms)" in found.text


@pytest.mark.parametrize(
    ("array_ms", "others_ms", "slow"),
    [(15.0, 2.0, True), (15.0, 6.0, False), (8.0, 1.0, False), (20.0, None, True)],
)
def test_slower_than_the_others_counts_from_ten_ms(array_ms, others_ms, slow):
    assert slowness.slow_at_array(array_ms, others_ms) is slow


def test_without_array_figures_the_page_says_so():
    found = judged(array_ms=None, others_ms=None)
    assert found.verdict == slowness.UNKNOWN
    assert "no figures for volume group ssu01-a-vg03" in found.text


def test_service_time_is_the_latency_sum_over_the_calls_and_none_across_a_restart():
    first = {"read_usecs": 0, "write_usecs": 0, "read_calls": 0, "write_calls": 0}
    last = {"read_usecs": 3000, "write_usecs": 9000, "read_calls": 1, "write_calls": 2}
    assert slowness.service_ms(first, last) == pytest.approx(4.0)
    assert slowness.service_ms(last, first) is None
    assert slowness.service_ms(first, first) is None


def test_a_volumes_latency_weighs_reads_and_writes_by_their_operations():
    volume = slowness.VolumeLatency("a", "v", "g", 300.0, 100.0, 2.0, 10.0)
    assert volume.ms == pytest.approx(4.0)
    idle = slowness.VolumeLatency("a", "w", "g", 0.0, 0.0, 0.0, 0.0)
    assert slowness.volume_group_ms([volume, idle]) == pytest.approx(4.0)
    assert slowness.typical_ms([2.0, 3.0, 40.0]) == 3.0
