"""The forecasts and grace states of ``portal.usage.maths`` at their edges: an owner already at
its limit, one that shrinks, one too slow to reach it within a year, a soft limit whose grace
has not started, a grace end carrying Lustre's flags, root's entry that holds the defaults, and
the OST shares when one owner holds everything."""

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


def test_a_grace_end_carrying_lustres_default_quota_flag_is_its_date():
    # lustre_quota.h: an id on the default quota has LQUOTA_FLAG_DEFAULT (1) above bit 48.
    ends = 1001 * DAY
    row = one_owner(0, 10, kbytes_soft=5, kbytes_time=(1 << 48) | ends)
    assert row["kbytes_over_soft"] == {"state": "in_grace", "grace_ends": ends}


def test_root_has_no_limits_its_entry_holds_the_filesystems_defaults():
    # As `lfs setquota -U -B 30T` and the week's grace leave id 0 in glb-usr (real sample).
    defaults = {"kbytes_hard": 30 * 2**30, "kbytes_soft": 10, "kbytes_time": 604800}
    rows = maths.owner_rows(
        "user",
        {"0": {"kbytes": 100, "inodes": 9}, "7": {"kbytes": 1, "inodes": 1}},
        {"0": {"kbytes": 200, "inodes": 9}, "7": {"kbytes": 2, "inodes": 1}},
        {"0": defaults, "7": {"kbytes_hard": 4}},
        seconds=DAY,
        until=1000 * DAY,
        now=1000 * DAY,
        thresholds=NO_CAPACITY,
        names={"0": "root"},
    )
    root, seven = rows
    assert root["name"] == "root" and root["kbytes"] == 200  # its usage, as Lustre counts it
    assert root["kbytes_hard"] is None and root["kbytes_percent"] is None
    assert root["kbytes_over_soft"] is None and root["kbytes_limit_at"] is None
    assert seven["kbytes_hard"] == 4 and seven["kbytes_percent"] == 50.0


def test_past_the_filesystems_warning_only_a_growing_owner_brings_it_there_now():
    past_warning = maths.Thresholds(100.0, 85.0, 80.0, 95.0)

    def capacity(first: float, last: float) -> dict:
        (row,) = maths.owner_rows(
            "user",
            {"7": {"kbytes": first, "inodes": 0}},
            {"7": {"kbytes": last, "inodes": 0}},
            {},
            seconds=DAY,
            until=1000 * DAY,
            now=1000 * DAY,
            thresholds=past_warning,
            names={},
        )
        return row["capacity"]

    grows = capacity(1, 2)  # 1 KiB a day: 10 KiB to the critical level in 10 days
    assert grows["warning_at"] == 1000 * DAY and grows["critical_at"] == 1010 * DAY
    for first, last in ((2, 1), (2, 2)):  # shrinking, standing still: no date at all
        shrinks = capacity(first, last)
        assert shrinks["warning_at"] is None and shrinks["critical_at"] is None


def test_one_owner_holding_a_whole_ost_has_all_of_it():
    points = [{"target": "OST0003", "kind": "user", "id": "7", "kbytes": 50.0}]
    (entry,) = maths.per_ost(points, {"user": {"7": "zoe"}})
    assert entry["owners"]["user"] == [
        {"kind": "user", "id": "7", "name": "zoe", "kbytes": 50.0, "share": 1.0}
    ]
    assert entry["owners"]["group"] == [] and entry["kbytes"] == 50.0
