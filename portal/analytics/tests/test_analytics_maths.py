"""The analytics maths on hand-made series, each answer worked out by hand in the test."""

from __future__ import annotations

import math

import pytest

from portal.analytics import capacity, maths
from portal.analytics.maths import make_point

GIB = 2**30
DAY = 86400


def ost(server, target, t, read=0, write=0, fs="scratch", **fields):
    return make_point(
        "ost",
        {"fs": fs, "target": target, "server": server},
        {"read_bytes": read, "write_bytes": write, **fields},
        t,
    )


def job(jobid, target, t, read=0, write=0, server="oss01", calls=0):
    return make_point(
        "ost_job",
        {"fs": "scratch", "target": target, "server": server, "jobid": jobid},
        {"read_bytes": read, "write_bytes": write, "read_calls": 0, "write_calls": calls},
        t,
    )


def test_counter_delta_is_last_minus_first_and_a_drop_is_a_restart():
    assert maths.counter_delta([100, 150, 400]) == 300
    # 100 -> 150 (+50), restart to 30 (+30 from zero), 30 -> 70 (+40)
    assert maths.counter_delta([100, 150, 30, 70]) == 120
    assert maths.counter_delta([5]) == 0


def test_shares_max_over_mean_cov_and_the_overloaded_server():
    points = [
        ost("oss01", "OST0000", 0, write=0),
        ost("oss01", "OST0000", 60, write=600),
        ost("oss02", "OST0001", 0, write=0),
        ost("oss02", "OST0001", 60, write=300),
        ost("oss03", "OST0002", 0, read=0),
        ost("oss03", "OST0002", 60, read=300),
        ost("oss04", "OST0003", 0),
        ost("oss04", "OST0003", 60, read=100, write=100),
    ]
    result = maths.imbalance(maths.server_bytes(points))
    # bytes 600, 300, 300, 200: total 1400, mean 350
    assert [(s.server, s.bytes, round(s.share, 4)) for s in result.shares] == [
        ("oss01", 600, 0.4286),
        ("oss02", 300, 0.2143),
        ("oss03", 300, 0.2143),
        ("oss04", 200, 0.1429),
    ]
    assert result.max_over_mean == pytest.approx(600 / 350)
    # deviations 250, -50, -50, -150: variance (62500 + 2500 + 2500 + 22500) / 4 = 22500
    assert result.cov == pytest.approx(150 / 350)
    # mean share 0.25, limit 0.3125: only oss01
    assert result.overloaded == ["oss01"]
    assert sum(s.share for s in result.shares) == pytest.approx(1.0)


def test_a_failed_over_target_counts_for_the_server_that_moved_its_bytes():
    points = [
        ost("oss01", "OST0000", 0, write=0),
        ost("oss01", "OST0000", 30, write=100),
        ost("oss02", "OST0000", 40, write=5),
        ost("oss02", "OST0000", 60, write=205),
    ]
    assert maths.server_bytes(points) == {"oss01": 100, "oss02": 200}


def test_balanced_servers_are_not_overloaded():
    totals = {"oss01": 1000.0, "oss02": 1100.0}
    result = maths.imbalance(totals)
    # shares 0.476 and 0.524, limit 0.625
    assert result.overloaded == []
    assert result.cov == pytest.approx(50 / 1050)


def test_ost_fill_spread_and_the_furthest_osts():
    def capacity(target, used, t=0):
        return ost(
            "oss01", target, t, kbytes_total=1000, kbytes_free=1000 - used, kbytes_avail=1000 - used
        )

    points = [
        capacity("OST0000", 100),
        capacity("OST0001", 150),
        capacity("OST0002", 400),
        capacity("OST0002", 50, t=-60),
    ]
    fill = maths.ost_fill(points)
    # newest fills 10 %, 15 %, 40 %: spread 30 points above 17, mean 21.67
    assert fill["spread_points"] == 30.0 and fill["flagged"] is True
    assert fill["furthest"][0] == {
        "target": "scratch-OST0002",
        "fill_percent": 40.0,
        "from_mean_points": 18.33,
    }
    assert maths.ost_fill(points[:2])["flagged"] is False


def test_a_large_job_on_one_ost_is_flagged_with_a_bounded_stripe_count():
    points = [
        job("dd.1234", "OST0003", 0),
        job("dd.1234", "OST0003", 600, write=40 * GIB),
        # wide job: 40 GiB over 10 OSTs, as warranted
        *[
            p
            for i in range(10)
            for p in (
                job("ior.77", f"OST{i:04X}", 0),
                job("ior.77", f"OST{i:04X}", 600, write=4 * GIB),
            )
        ],
        # small job on one OST: never flagged
        job("ls.9", "OST0001", 0),
        job("ls.9", "OST0001", 600, read=GIB),
    ]
    (flagged,) = maths.striping(points, filesystem_osts=24)
    # 40 GiB at 4 GiB a stripe: 10 stripes warranted, the job used 1
    assert {k: flagged[k] for k in ("jobid", "osts", "bytes", "stripe_count")} == {
        "jobid": "dd.1234",
        "osts": 1,
        "bytes": 40 * GIB,
        "stripe_count": 10,
    }
    assert "lfs setstripe -c 10 <dir>" in flagged["advice"]
    assert flagged["advice"].startswith("Job dd.1234 moved 40 GiB through 1 OST of 24;")
    # a filesystem of 6 OSTs bounds the advice at 6
    assert maths.striping(points, filesystem_osts=6)[0]["stripe_count"] == 6


def test_small_io_share_and_read_write_mix_from_brw_and_ost():
    def brw(bucket, t, reads, writes, section="disk_io_size"):
        return make_point(
            "brw",
            {
                "fs": "scratch",
                "target": "OST0000",
                "server": "oss01",
                "section": section,
                "bucket": bucket,
            },
            {"read_ios": reads, "write_ios": writes},
            t,
        )

    points = [
        brw("4K", 0, 0, 0),
        brw("4K", 60, 30, 10),  # 40 small
        brw("64K", 0, 0, 0),
        brw("64K", 60, 0, 20),  # 64K is not below 64K
        brw("1M", 0, 0, 0),
        brw("1M", 60, 40, 100),
        brw("16", 0, 0, 0, "pages_per_bulk_rw"),
        brw("16", 60, 999, 999, "pages_per_bulk_rw"),
        ost("oss01", "OST0000", 0),
        ost("oss01", "OST0000", 60, read=300, write=100),
    ]
    sizes = maths.io_sizes(points)
    assert sizes["section"] == "disk_io_size"
    assert sizes["small_share"] == pytest.approx(40 / 200)
    assert sizes["read_share"] == pytest.approx(0.75)
    assert maths.io_sizes(points, small_io=65 * 1024)["small_share"] == pytest.approx(60 / 200)
    assert maths.bucket_bytes("pages_per_bulk_rw", "16") == 16 * 4096


def test_capacity_forecast_from_a_steady_trend():
    # 1 point a day: 50 % at day 0, 51 % at day 1, ..., 60 % at day 10
    points = [
        ost(
            "oss01",
            "OST0000",
            day * DAY,
            kbytes_total=1000,
            kbytes_free=500 - 10 * day,
            kbytes_avail=500 - 10 * day,
        )
        for day in range(11)
    ]
    forecast = capacity.capacity_forecast(points, warning=80, critical=95)
    row = forecast["osts"]["scratch-OST0000"]
    assert row["points_per_day"] == pytest.approx(1.0)
    # 80 % at day 30, 95 % at day 45
    assert row["warning_at"] == pytest.approx(30 * DAY)
    assert row["critical_at"] == pytest.approx(45 * DAY)
    assert forecast["filesystem"]["warning_at"] == pytest.approx(30 * DAY)


def test_a_shrinking_or_slow_fill_is_not_within_a_year():
    flat = [(0.0, 50.0), (DAY, 50.0)]
    slow = [(0.0, 10.0), (100 * DAY, 10.1)]
    assert capacity.reaches(flat, 80, now=DAY) is None
    assert capacity.reaches(slow, 80, now=100 * DAY) is None
    assert capacity.reaches(flat, 40, now=DAY) == DAY  # already past it
    assert math.isclose(capacity.linear_fit([(0, 1), (1, 3), (2, 5)])[0], 2.0)


def test_heatmap_cells_are_bytes_per_second_of_each_step_hottest_row_first():
    # oss01: 0 -> 600 -> 1800 bytes at t=0, 60, 120; oss02: 0 -> 60 -> 120.
    points = [
        ost("oss01", "OST0000", 0, write=0),
        ost("oss01", "OST0000", 60, write=600),
        ost("oss01", "OST0000", 120, write=1800),
        ost("oss02", "OST0001", 0, write=0),
        ost("oss02", "OST0001", 60, write=60),
        ost("oss02", "OST0001", 120, write=120),
    ]
    grid = maths.heatmap(points, "server", 0, 120, 60)
    assert grid["times"] == [0, 60]
    # 600 bytes in the first minute = 10 B/s, 1200 in the second = 20 B/s; oss02 1 B/s each.
    assert grid["rows"] == [
        {"name": "oss01", "values": [10.0, 20.0]},
        {"name": "oss02", "values": [1.0, 1.0]},
    ]
    assert grid["max"] == 20.0
    by_target = maths.heatmap(points, "target", 0, 120, 60)
    assert [row["name"] for row in by_target["rows"]] == ["scratch-OST0000", "scratch-OST0001"]


def test_a_missed_sensor_round_leaves_no_heatmap_column_empty_while_bytes_move():
    # Both servers write 10 B/s all along; a loaded machine skipped their round at t=30 (the
    # increment at t=40 covers 20 s). Before: the 20..30 column was blank for both servers and
    # the next one showed twice the rate.
    times = [0, 10, 20, 40, 50, 60]
    points = [
        ost(server, f"OST000{i}", t, write=10 * t)
        for i, server in enumerate(("oss01", "oss02"))
        for t in times
    ]
    grid = maths.heatmap(points, "server", 0, 60, 10)
    assert [row["values"] for row in grid["rows"]] == [[10.0] * 6, [10.0] * 6]


def test_heatmap_columns_not_aligned_with_the_points_share_each_increment_by_time():
    # Points at the end of InfluxDB's minute buckets (60, 120, 180); the window and its
    # columns start 30 s later. 60 B/s all along reads 60 B/s in every column.
    points = [ost("oss01", "OST0000", t, write=60 * t) for t in (30, 60, 120, 180, 210)]
    grid = maths.heatmap(points, "server", 30, 210, 60)
    assert grid["rows"][0]["values"] == [60.0, 60.0, 60.0]


def test_a_series_first_increment_stays_in_its_own_step():
    # A target mounted on oss02 at t=100 (a failover): its window's first value is placed at
    # the window's start, its next at t=120: its bytes belong to the step before t=120 only.
    points = [
        ost("oss02", "OST0001", 0, write=0),
        ost("oss02", "OST0001", 120, write=1200),
        ost("oss02", "OST0001", 180, write=1800),
    ]
    grid = maths.heatmap(points, "server", 0, 180, 60, point_step=60)
    assert grid["rows"][0]["values"] == [0.0, 20.0, 10.0]


def test_a_young_rack_colours_only_the_columns_since_its_data_began():
    # An hour's window whose data began 30 s before its end: the window's first value comes
    # placed at the window's start. Only the last column has bytes, none smeared over the hour.
    points = [ost("oss01", "OST0000", 0, write=0)] + [
        ost("oss01", "OST0000", t, write=10 * (t - 3570)) for t in (3580, 3590, 3600)
    ]
    values = maths.heatmap(points, "server", 0, 3600, 60)["rows"][0]["values"]
    assert values[:59] == [0.0] * 59 and values[59] == pytest.approx(300 / 60)


def test_a_server_that_was_down_is_not_coloured_busy_through_its_outage():
    # 10 B/s, then down from t=30 to t=100 (its counters restart), 10 B/s again after.
    points = [ost("oss01", "OST0000", t, write=10 * t) for t in (0, 10, 20, 30)] + [
        ost("oss01", "OST0000", t, write=10 * (t - 100)) for t in (110, 120)
    ]
    values = maths.heatmap(points, "server", 0, 120, 10)["rows"][0]["values"]
    assert values[:3] == [10.0] * 3 and values[3:8] == [0.0] * 5
    assert sum(values[8:]) * 10 == pytest.approx(200)


def test_the_jobs_of_one_heatmap_cell():
    points = [
        job("a", "OST0000", 0, write=0),
        job("a", "OST0000", 60, write=100),
        job("a", "OST0000", 120, write=100),  # idle in the second minute
        job("b", "OST0000", 0, write=0),
        job("b", "OST0000", 60, write=50),
        job("b", "OST0000", 120, write=550),
        job("c", "OST0001", 0, write=0, server="oss02"),
        job("c", "OST0001", 120, write=999, server="oss02"),
    ]
    assert maths.cell_jobs(points, "server", "oss01", 0, 60) == [
        {"jobid": "a", "bytes": 100.0},
        {"jobid": "b", "bytes": 50.0},
    ]
    assert maths.cell_jobs(points, "server", "oss01", 60, 120) == [{"jobid": "b", "bytes": 500.0}]
    assert maths.cell_jobs(points, "target", "scratch-OST0001", 0, 120) == [
        {"jobid": "c", "bytes": 999.0}
    ]


def test_overloaded_since_is_the_start_of_the_last_unbroken_run():
    # Four minutes; oss01 and oss02 even in minute 1, then oss01 moves 3x oss02's bytes.
    # Limit: (1 + 0.25) / 2 = 0.625 of each step; 3/4 = 0.75 is above it.
    writes = {"oss01": [0, 100, 400, 700, 1000], "oss02": [0, 100, 200, 300, 400]}
    points = [
        ost(server, f"OST{i}", 60 * n, write=value)
        for i, (server, values) in enumerate(writes.items())
        for n, value in enumerate(values)
    ]
    since = maths.overloaded_since(points, ["oss01", "oss02"], 0, 240, 60)
    assert since == {"oss01": 60, "oss02": None}


def test_each_servers_share_of_its_ssu():
    totals = {"oss01": 300.0, "oss02": 100.0, "oss03": 50.0, "oss04": 50.0}
    group_of = {"oss01": "ssu01", "oss02": "ssu01", "oss03": "ssu02", "oss04": "ssu02"}
    assert maths.group_shares(totals, group_of) == {
        "oss01": 0.75,
        "oss02": 0.25,
        "oss03": 0.5,
        "oss04": 0.5,
    }


def test_bytes_per_target_and_top_jobs_by_operations():
    points = [
        ost("oss01", "OST0000", 0, write=0),
        ost("oss01", "OST0000", 60, write=10, read=5),
        ost("oss02", "OST0001", 0, write=0),
        ost("oss02", "OST0001", 60, write=7),
        job("big", "OST0000", 0, write=0, calls=0),
        job("big", "OST0000", 60, write=GIB, calls=10),
        job("chatty", "OST0000", 0, write=0, calls=0),
        job("chatty", "OST0000", 60, write=1000, calls=5000),
    ]
    assert maths.target_bytes(points) == {"scratch-OST0000": 15.0, "scratch-OST0001": 7.0}
    assert maths.target_bytes(points, "oss02") == {"scratch-OST0001": 7.0}
    assert [j["jobid"] for j in maths.top_jobs(points, by="ops")] == ["chatty", "big"]
    assert [j["jobid"] for j in maths.top_jobs(points, target="scratch-OST0000")] == [
        "big",
        "chatty",
    ]


def test_the_sampling_step_is_the_usual_gap_between_points():
    points = [ost("oss01", "OST0000", t) for t in (0, 10, 20, 30, 55)]
    points += [ost("oss02", "OST0001", t) for t in (0, 10)]
    assert maths.sampling_step(points) == 10
    assert maths.sampling_step([]) == 1.0


def test_small_io_per_ost_and_per_ssu():
    def brw(server, target, bucket, t, writes):
        tags = {"fs": "scratch", "target": target, "server": server}
        tags.update(section="disk_io_size", bucket=bucket)
        return make_point("brw", tags, {"read_ios": 0, "write_ios": writes}, t)

    points = [
        brw("oss01", "OST0000", "4K", 0, 0),
        brw("oss01", "OST0000", "4K", 60, 30),
        brw("oss01", "OST0000", "1M", 0, 0),
        brw("oss01", "OST0000", "1M", 60, 10),  # OST0000: 30 of 40 small
        brw("oss03", "OST0001", "1M", 0, 0),
        brw("oss03", "OST0001", "1M", 60, 60),  # OST0001: none small
    ]
    sizes = maths.io_sizes(points, group_of={"oss01": "ssu01", "oss03": "ssu02"})
    assert sizes["small_share"] == pytest.approx(30 / 100)
    assert sizes["per_ost"]["scratch-OST0000"]["small_share"] == pytest.approx(0.75)
    assert sizes["per_ost"]["scratch-OST0001"]["small_share"] == 0
    assert sizes["per_ssu"]["ssu01"]["ios"] == 40
    assert sizes["per_ssu"]["ssu02"]["small_share"] == 0
    assert "per_ssu" not in maths.io_sizes(points)
