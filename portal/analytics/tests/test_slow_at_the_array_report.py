"""The analytics report names an OST slow at the array as such, not as an overloaded OSS: the
load page and the API, on points in the real test InfluxDB."""

from __future__ import annotations

import pytest

from portal.health.tests.array_metrics import write_slowness

pytestmark = [pytest.mark.services, pytest.mark.django_db]


def test_the_load_page_and_the_api_name_the_ost_slow_at_the_array(
    rack_inventory, metrics_db, client, world
):
    write_slowness(
        array_ms={"ssu01-a-vg03": 42.0},
        service_ms={"scratch-OST0003": 45.0},
        cpu_percent={"oss02": 12.0},
    )
    client.force_login(world["viewer"])
    page = client.get("/analytics/load/?window=1h").content.decode()
    assert 'data-finding="slow-at-array"' in page
    assert (
        "scratch-OST0003</strong></a>: Slow at the array: volume scratch-OST0003 (ssu01-a-vg03) "
        "answers in 42 ms at the array (others 2.0 ms); the OSS oss02 is not busy"
    ) in page
    assert "Its OSS is not the cause." in page
    body = client.get("/api/v1/analytics/report/?window=1h").json()
    (slow,) = body["slow_at_array"]
    assert (slow["target"], slow["server"], slow["volume_group"]) == (
        "scratch-OST0003",
        "oss02",
        "ssu01-a-vg03",
    )
    assert slow["array_ms"] == pytest.approx(42.0)
    assert "oss02" not in body["overloaded"]


def test_a_quick_array_names_no_ost(rack_inventory, metrics_db, client, world):
    write_slowness(array_ms={}, service_ms={}, cpu_percent={})
    client.force_login(world["viewer"])
    page = client.get("/analytics/load/?window=1h").content.decode()
    assert 'data-finding="slow-at-array"' not in page
    assert client.get("/api/v1/analytics/report/?window=1h").json()["slow_at_array"] == []


def test_an_overloaded_oss_still_says_which_of_its_osts_is_slow_at_the_array(
    rack_inventory, metrics_db, client, world
):
    oss02 = [f"scratch-OST000{n}" for n in (1, 3, 5, 7, 9)] + ["scratch-OST000b"]
    write_slowness(
        array_ms={"ssu01-a-vg03": 42.0},
        service_ms={"scratch-OST0003": 45.0},
        cpu_percent={},
        traffic={**dict.fromkeys(oss02, 3), "scratch-OST0003": 4},
    )
    client.force_login(world["viewer"])
    page = client.get("/analytics/load/?window=1h").content.decode()
    assert "<strong>oss02</strong></a> is overloaded" in page
    assert "scratch-OST0003</a> (slow at the array, above)" in page
