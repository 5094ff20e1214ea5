"""The forecasts and grace states of ``portal.usage.maths`` at their edges: an owner already at
its limit, one that shrinks, one too slow to reach it within a year, a soft limit whose grace
has not started, and the OST shares when one owner holds everything."""

from __future__ import annotations

from portal.usage import maths

DAY = 86400
NO_CAPACITY = maths.Thresholds(None, None, 80.0, 95.0)


def one_owner(first: float | None, last: float, **limits) -> dict:
    (row,) = maths.owner_rows(
        "user",
        {} if first is None else {"7": {"kbytes": first, "inodes": 0}},
        {"7": {"kbytes": last, "inodes": 0}},
        {"7": limits},
        seconds=DAY,
        until=1000 * DAY,
        now=1000 * DAY,
        thresholds=NO_CAPACITY,
        names={},
    )
    return row


def test_an_owner_at_its_limit_reaches_it_now_and_one_that_shrinks_never():
    assert one_owner(90, 100, kbytes_hard=100)["kbytes_limit_at"] == 1000 * DAY
    assert one_owner(100, 90, kbytes_hard=100)["kbytes_limit_at"] is None
    assert one_owner(100, 90, kbytes_hard=100)["kbytes_per_day"] == -10


def test_a_date_further_than_a_year_is_no_date():
    assert one_owner(0, 10, kbytes_hard=10 + 365 * 10)["kbytes_limit_at"] == 1365 * DAY
    assert one_owner(0, 10, kbytes_hard=10 + 367 * 10)["kbytes_limit_at"] is None


def test_an_owner_first_seen_at_the_windows_end_has_no_growth():
    row = one_owner(None, 10, kbytes_hard=20)
    assert row["kbytes_growth"] is None and row["kbytes_limit_at"] is None


def test_over_the_soft_limit_before_lustre_started_its_grace():
    row = one_owner(0, 10, kbytes_soft=5, kbytes_hard=20)
    assert row["kbytes_over_soft"] == {"state": "in_grace", "grace_ends": None}
    assert one_owner(0, 5, kbytes_soft=5)["kbytes_over_soft"] is None  # at it is not over it


def test_one_owner_holding_a_whole_ost_has_all_of_it():
    points = [{"target": "OST0003", "kind": "user", "id": "7", "kbytes": 50.0}]
    (entry,) = maths.per_ost(points, {"user": {"7": "zoe"}})
    assert entry["owners"]["user"] == [
        {"kind": "user", "id": "7", "name": "zoe", "kbytes": 50.0, "share": 1.0}
    ]
    assert entry["owners"]["group"] == [] and entry["kbytes"] == 50.0
