"""A day's report read from the hour means (``services._read_hours``): a hand-made day of one
SSU, written as the continuous queries leave it (minute means, and hour means of the hours that
have ended), gives the same numbers as the minute means of the same day and as the offline
report of the same points."""

from __future__ import annotations

import io
import json
import math
import time
from contextlib import redirect_stdout

import pytest

from metrics.influxql import retention
from portal import influxdb as influx
from portal.analytics import report as offline
from portal.analytics import services
from portal.analytics.tests.conftest import rounded
from sensors.lineproto import line, series

pytestmark = [pytest.mark.services, pytest.mark.django_db]
MIB = 2**20
OSTS = {"OST0000": "oss01", "OST0001": "oss02", "OST0002": "oss01", "OST0003": "oss02"}
COMPARED = ("oss", "imbalance", "overloaded", "striping", "io_size", "top_jobs", "top_clients")


def counters(target: str, number: int, elapsed: int) -> dict[tuple, dict]:
    """Every series of one OST after ``elapsed`` seconds: oss01's OSTs write 2 MiB/s, oss02's
    1 MiB/s and a burst in the afternoon; job "day.1" is half of each OST's writes, "night.2"
    writes on OST0000 for the first eight hours only. OST0003 is read from its 20th minute on:
    before, its stats have no read counters (Lustre leaves out a counter with no samples), so
    the first point of the window's first hour lacks fields that later ones have."""
    rate = 2 * MIB if OSTS[target] == "oss01" else MIB
    written = rate * elapsed + (20 * MIB * max(0, min(elapsed, 16 * 3600) - 14 * 3600))
    night = 8 * MIB * min(elapsed, 8 * 3600) if target == "OST0000" else 0
    tags = {"fs": "scratch", "target": target, "server": OSTS[target]}
    used = 400_000 + 100_000 * number + elapsed // 600
    found = {
        ("ost", tuple(tags.items())): {
            "read_bytes": written // 8,
            "read_calls": elapsed // 60,
            "write_bytes": written + night,
            "write_calls": elapsed // 6,
            "kbytes_total": 1_000_000,
            "kbytes_free": 1_000_000 - used,
            "kbytes_avail": 1_000_000 - used,
        },
        ("ost_job", (*tags.items(), ("jobid", "day.1"))): {
            "read_bytes": 0,
            "read_calls": 0,
            "write_bytes": written // 2,
            "write_calls": elapsed // 12,
        },
    }
    if target == "OST0003" and elapsed < 1200:
        del found[("ost", tuple(tags.items()))]["read_bytes"]
        del found[("ost", tuple(tags.items()))]["read_calls"]
    if night:
        found[("ost_job", (*tags.items(), ("jobid", "night.2")))] = {
            "read_bytes": 0,
            "read_calls": 0,
            "write_bytes": night,
            "write_calls": elapsed // 30,
        }
    for bucket, share in (("4K", 0.25), ("1M", 0.75)):
        brw = (*tags.items(), ("section", "disk_io_size"), ("bucket", bucket))
        ios = int(share * (written + night) / (4096 if bucket == "4K" else MIB))
        found[("brw", brw)] = {"read_ios": 0, "write_ios": ios}
    return found


def mean_line(key: tuple, fields: dict, t: int) -> str:
    return line(series(key[0], dict(key[1])), {f"mean_{k}": v for k, v in fields.items()}, t)


def split_an_hour_between_two_series(start: int) -> None:
    """OST0000's sensor gained a static tag within two hours: the continuous query kept the
    hour's old and new series apart, each with the mean of its part of the hour (the later
    part's higher, the earlier's lower than the whole hour's). One tag sorts before the
    others, one after: whichever order InfluxDB gives a group's rows of one time, one of the
    two hours would read as a counter that went down (a restart) were both rows kept."""
    lines = []
    for hours, tag, part in ((5, "a_static", (1800, 3600)), (9, "z_static", (0, 1800))):
        hour = (start // 3600 + hours) * 3600
        (key, fields), *_ = counters("OST0000", 0, 0).items()
        elapsed = [hour + second - start for second in range(part[0], part[1], 60)]
        samples = [counters("OST0000", 0, e)[key] for e in elapsed]
        means = {name: sum(s[name] for s in samples) / len(samples) for name in fields}
        lines.append(mean_line((key[0], (*key[1], (tag, "x"))), means, hour))
    client = influx.client()
    client.write_points(lines, protocol="line", time_precision="s", retention_policy="hour")


@pytest.fixture
def a_day(metrics_db):
    """A day of minute means ending now, the hour means of its ended hours, and the same
    minutes as raw lines for the offline report."""
    for policy in retention.RETENTION_POLICIES:
        influx.client().query(retention.retention_policy_statement("CREATE", metrics_db, policy))
    end = int(time.time())
    start = end - 86400 - (end % 60)
    minutes, raw, hours = [], [], []
    hour_sums: dict[tuple, dict] = {}
    for t in range(start, end, 60):
        for number, target in enumerate(OSTS):
            for key, fields in counters(target, number, t - start).items():
                minutes.append(mean_line(key, fields, t))
                if t >= end - 86400:  # the report's window: what the offline report is given
                    raw.append(line(series(key[0], dict(key[1])), fields, t * 10**9))
                if t // 3600 * 3600 >= start and t // 3600 * 3600 + 3600 <= end:
                    kept = hour_sums.setdefault((t // 3600 * 3600, key), {})
                    for name, value in fields.items():  # mean(*): each field its own count
                        total, n = kept.get(name, (0, 0))
                        kept[name] = (total + value, n + 1)
    for (hour, key), sums in hour_sums.items():
        hours.append(mean_line(key, {k: total / n for k, (total, n) in sums.items()}, hour))
    client = influx.client()
    client.write_points(minutes, protocol="line", time_precision="s", retention_policy="minute")
    client.write_points(hours, protocol="line", time_precision="s", retention_policy="hour")
    return start, end, raw


def test_a_day_from_the_hour_means_gives_the_numbers_of_its_minutes_and_of_the_offline_report(
    a_day, monkeypatch, tmp_path
):
    start, end, raw = a_day
    split_an_hour_between_two_series(start)
    window = services.Window(end - 86400, end, "24h")
    by_hours = services.report(window, None)
    monkeypatch.setattr(services, "HOURS_FROM_SECONDS", math.inf)
    by_minutes = services.report(window, None)

    assert by_hours["request"]["policy"] == "hour"
    assert by_hours["request"]["step"] == 3600
    assert by_minutes["request"]["policy"] == "minute"
    # A series is 23 or 24 hours and its two edges, not the last of each of 60 steps (InfluxDB
    # reads 24 hour means for them, not 1,440 minute means).
    assert by_hours["request"]["points"] * 2 < by_minutes["request"]["points"]
    for key in COMPARED:
        assert rounded(by_hours[key], 6) == rounded(by_minutes[key], 6), key
    assert by_hours["overloaded"] == ["oss01"]
    assert {job["jobid"] for job in by_hours["top_jobs"]} == {"day.1", "night.2"}
    # The afternoon's burst shows in oss02's hours of the heat map, not elsewhere.
    oss = {row["name"]: row["values"] for row in by_hours["heatmap"]["oss"]["rows"]}
    times = by_hours["heatmap"]["oss"]["times"]
    burst = [v for t, v in zip(times, oss["oss02"], strict=True) if 14.5 <= (t - start) / 3600 < 16]
    calm = [v for t, v in zip(times, oss["oss02"], strict=True) if 4 <= (t - start) / 3600 < 12]
    assert min(burst) > 5 * max(calm)

    dump = tmp_path / "day.lp"
    dump.write_text("\n".join(raw) + "\n")
    out = io.StringIO()
    with redirect_stdout(out):
        assert offline.main([str(dump)]) == 0
    local = json.loads(out.getvalue())
    for key in ("oss", "imbalance", "overloaded", "striping", "io_size"):
        assert rounded(local[key], 6, ("ssu", "ssu_share")) == rounded(
            by_hours[key], 6, ("ssu", "ssu_share")
        ), key
