"""The usage by owner read from a real InfluxDB (the hand-written accounting of ``conftest``):
what the API, the usage page and the target page show, and the API's refusals."""

from __future__ import annotations

import html
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from portal import influxdb as influx
from portal.health.models import HealthSettings
from portal.usage.models import OwnerName
from portal.usage.tests.conftest import GIB, MIB4, TIB, limit_point, owner_point

pytestmark = [pytest.mark.services, pytest.mark.django_db]


def usage(client, world, **params):
    client.force_login(world["viewer"])
    answer = client.get(reverse("usage-list"), params)
    assert answer.status_code == 200, answer.content
    return answer.json()


def ids(rows: list[dict]) -> list[str]:
    return [row["id"] for row in rows]


def day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d")


def test_top_owners_by_space_and_by_files_in_order(accounting, client, world):
    body = usage(client, world, window="24h")
    users = body["top"]["user"]
    assert ids(users["kbytes"]) == ["1001", "1000", "1002", "1003"]
    # Space over every target (OST0001 once though it moved to oss01), the MDT's own included.
    space = {row["id"]: row["kbytes"] for row in users["kbytes"]}
    assert space == {
        "1001": 350 * GIB + MIB4,
        "1000": 210 * GIB + MIB4,
        "1002": 30 * GIB + MIB4,
        "1003": 5 * GIB + MIB4,
    }
    # Files are the MDT's: the OSTs' objects are not counted.
    assert ids(users["inodes"]) == ["1000", "1001", "1003", "1002"]
    assert [row["inodes"] for row in users["inodes"]] == [3000, 500, 20, 10]
    assert ids(body["top"]["group"]["kbytes"]) == ["100", "200"]
    assert body["top"]["project"]["kbytes"][0]["kbytes"] == 595 * GIB + 4 * MIB4
    assert body["window"]["until"] - body["window"]["since"] == 7140


def test_growth_and_the_date_an_owner_reaches_its_hard_limit(accounting, client, world):
    t0, t1, _ = accounting
    body = usage(client, world, window="24h")
    alice = next(row for row in body["top"]["user"]["kbytes"] if row["id"] == "1000")
    assert alice["kbytes_growth"] == 100 * GIB
    assert alice["kbytes_per_day"] == pytest.approx(100 * GIB * 86400 / (t1 - t0))
    assert alice["inodes_growth"] == 2000
    assert alice["kbytes_percent"] == round(100 * (210 * GIB + MIB4) / TIB, 1)
    rate = 100 * GIB / (t1 - t0)
    expected = t1 + (TIB - (210 * GIB + MIB4)) / rate
    assert alice["kbytes_limit_at"] == pytest.approx(expected, abs=1)
    assert alice["inodes_limit_at"] == pytest.approx(t1 + 7000 / (2000 / (t1 - t0)), abs=1)
    # The OST pool's 1 GiB limit is not the owner's quota.
    assert alice["kbytes_hard"] == TIB and alice["kbytes_over_soft"] is None
    bob = next(row for row in body["top"]["user"]["kbytes"] if row["id"] == "1001")
    assert bob["kbytes_growth"] == 0 and bob["kbytes_limit_at"] is None
    assert bob["capacity"] == {
        "warning_at": None,
        "critical_at": None,
        "warning_percent": HealthSettings.load().capacity_warning_percent,
        "critical_percent": HealthSettings.load().capacity_critical_percent,
    }


def test_an_owner_who_first_wrote_within_the_window_grows_over_its_own_span(
    accounting, client, world
):
    """A new project's user filling fast is the one to warn about: its rate is its own
    growth over the time it has been seen, not spread over the whole window."""
    t0, t1, _ = accounting
    seen = (t0 + t1) // 2
    influx.write_lines(
        [
            owner_point(seen, "OST0001", "oss01", "user", 1004, 10 * GIB, 77),
            owner_point(t1, "OST0001", "oss01", "user", 1004, 20 * GIB, 77),
            limit_point(t1, "user", 1004, kbytes_hard=120 * GIB),
        ],
        precision="n",
    )
    body = usage(client, world, window="24h")
    erin = next(row for row in body["top"]["user"]["kbytes"] if row["id"] == "1004")
    assert erin["kbytes_growth"] == 10 * GIB
    assert erin["kbytes_per_day"] == pytest.approx(10 * GIB * 86400 / (t1 - seen))
    assert erin["kbytes_limit_at"] == pytest.approx(t1 + 100 * GIB / (10 * GIB / (t1 - seen)))
    # Those seen over the whole window keep the window's span.
    alice = next(row for row in body["top"]["user"]["kbytes"] if row["id"] == "1000")
    assert alice["kbytes_per_day"] == pytest.approx(100 * GIB * 86400 / (t1 - t0))


def test_an_owner_without_a_limit_is_forecast_against_the_capacity_thresholds(
    accounting, client, world
):
    t0, t1, _ = accounting
    health = HealthSettings.load()
    body = usage(client, world, window="24h")
    group = next(row for row in body["top"]["group"]["kbytes"] if row["id"] == "100")
    assert group["kbytes_hard"] is None
    rate = 100 * GIB / (t1 - t0)
    for level in ("warning", "critical"):
        limit = 2 * TIB * getattr(health, f"capacity_{level}_percent") / 100
        expected = t1 + (limit - 600 * GIB) / rate
        assert group["capacity"][f"{level}_at"] == pytest.approx(expected, abs=1)
    assert body["capacity"]["kbytes_used"] == 600 * GIB


def test_owners_over_their_soft_limit_in_grace_or_past_it(accounting, client, world):
    _, _, now = accounting
    body = usage(client, world, window="24h")
    over = body["over_soft"]
    assert ids(over) == ["1003", "1002"]  # past its grace first
    assert over[0]["kbytes_over_soft"] == {"state": "past_grace", "grace_ends": now - 3600}
    assert over[1]["kbytes_over_soft"] == {"state": "in_grace", "grace_ends": now + 3 * 86400}


def test_whose_data_fills_each_ost(accounting, client, world):
    body = usage(client, world, window="24h")
    osts = {entry["target"]: entry for entry in body["osts"]}
    assert sorted(osts) == ["OST0000", "OST0001"]  # the MDT is not an OST
    first = osts["OST0000"]["owners"]["user"]
    assert [(o["id"], o["kbytes"], o["share"]) for o in first] == [
        ("1001", 300 * GIB, 0.6),
        ("1000", 200 * GIB, 0.4),
    ]
    second = osts["OST0001"]["owners"]["user"]
    assert [(o["id"], o["share"]) for o in second] == [
        ("1001", round(50 / 95, 4)),
        ("1002", round(30 / 95, 4)),
        ("1000", round(10 / 95, 4)),
    ]
    assert osts["OST0001"]["owners"]["project"][0]["share"] == 1.0


def test_the_pages_name_the_owners_once_the_site_maps_their_ids(accounting, client, world):
    client.force_login(world["viewer"])
    page = client.get(reverse("usage:index"), {"window": "24h"}).content.decode()
    assert "user 1001" in page and "alice" not in page  # numbers until mapped
    OwnerName.objects.create(kind="user", number=1000, name="alice", source="upload")
    OwnerName.objects.create(kind="user", number=1003, name="dave", source="upload")
    page = client.get(reverse("usage:index"), {"window": "24h"}).content.decode()
    assert "user alice (1000)" in page and "user 1001" in page
    assert "project 42" in page  # projects stay numbers
    over = page[page.index('id="over-soft"') : page.index('id="top-user-kbytes"')]
    assert "user dave (1003)" in over and "past its grace" in over and "in grace" in over
    alice = page[page.index('data-owner="user:1000"') :]
    t0, t1, _ = accounting
    forecast = t1 + (TIB - (210 * GIB + MIB4)) / (100 * GIB / (t1 - t0))
    assert day(forecast) in alice[: alice.index("</tr>")]
    assert 'data-chart="bars"' in page and "growth-data" in page
    # The target page names who fills its OST, with the share.
    target = client.get(reverse("health:target", args=["scratch-OST0000"])).content.decode()
    owners = target[target.index('id="target-owners"') :]
    assert "user 1001 300 GiB (60 %)" in owners
    assert "user alice (1000) 200 GiB (40 %)" in owners


@pytest.mark.parametrize(
    ("params", "field", "said"),
    [
        ({"window": "2h"}, "window", "'2h' is not one of 24h, 7d, 30d"),
        ({"fs": "nope"}, "fs", "there is no filesystem 'nope'"),
        ({"since": "yesterday"}, "since", "is not a time"),
        ({"until": "2026-11-23T08:00:00Z"}, "since", "give the start of the range"),
        (
            {"since": "2026-11-23T08:00:00Z", "until": "2026-11-22T08:00:00Z"},
            "until",
            "must be after its start",
        ),
    ],
)
def test_the_api_refuses_a_bad_window_or_filesystem_naming_the_field(
    accounting, client, world, params, field, said
):
    client.force_login(world["viewer"])
    answer = client.get(reverse("usage-list"), params)
    assert answer.status_code == 400
    assert list(answer.json()) == [field]
    assert said in answer.json()[field][0]
    page = client.get(reverse("usage:index"), params)
    assert page.status_code == 400 and said in html.unescape(page.content.decode())


def test_a_window_without_accounting_says_so(rack_inventory, metrics_db, client, world):
    body = usage(client, world, window="24h")
    assert body["window"] is None and body["top"]["user"]["kbytes"] == []
    client.force_login(world["viewer"])
    page = client.get(reverse("usage:index")).content.decode()
    assert "No accounting in this window yet" in page
