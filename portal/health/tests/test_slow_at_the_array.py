"""The target page tells a slow OST at the array from a busy OSS: the volume's latency at the
array (the array collector's `array_volume`) against the OST's service time at its server and
that server's CPU, on points in the real test InfluxDB."""

from __future__ import annotations

import pytest

from portal import influxdb as influx
from portal.health.tests.array_metrics import write_slowness

pytestmark = [pytest.mark.services, pytest.mark.django_db]


def target_page(client, world, label: str) -> str:
    client.force_login(world["viewer"])
    return client.get(f"/health/targets/{label}/").content.decode()


def test_an_ost_slow_at_the_array_is_named_so_and_its_oss_not_busy(
    rack_inventory, metrics_db, client, world
):
    write_slowness(
        array_ms={"ssu01-a-vg03": 42.0},
        service_ms={"scratch-OST0003": 45.0},
        cpu_percent={"oss02": 12.0},
    )
    page = target_page(client, world, "scratch-OST0003")
    assert 'data-verdict="slow_at_array"' in page
    assert (
        "Slow at the array: volume scratch-OST0003 (ssu01-a-vg03) answers in 42 ms at the array "
        "(others 2.0 ms); the OSS oss02 is not busy (CPU 12 %, its other OSTs 3.0 ms); its "
        "service time at oss02 is 45 ms"
    ) in page
    # Its neighbour on the same array and server is fine.
    other = target_page(client, world, "scratch-OST0001")
    assert 'data-verdict="normal"' in other
    assert "Neither the array nor the OSS is slow" in other


def test_a_busy_oss_is_named_so_and_the_array_answers_quickly(
    rack_inventory, metrics_db, client, world
):
    write_slowness(
        array_ms={},
        service_ms={"scratch-OST0003": 30.0, "scratch-OST0001": 28.0},
        cpu_percent={"oss02": 95.0},
    )
    page = target_page(client, world, "scratch-OST0003")
    assert 'data-verdict="busy_oss"' in page
    assert "The OSS oss02 is busy (CPU 95 %), the array answers in 2.0 ms" in page
    assert "Slow at the array" not in page


def test_without_the_array_collectors_figures_the_page_says_it_cannot_tell(
    rack_inventory, metrics_db, client, world
):
    page = target_page(client, world, "scratch-OST0003")
    assert 'data-verdict="unknown"' in page
    assert "The array has no figures for volume group ssu01-a-vg03" in page


def test_with_influxdb_down_the_target_page_answers_and_says_the_events_cannot_be_read(
    rack_inventory, metrics_db, client, world, settings
):
    answering = settings.INFLUXDB_URL
    settings.INFLUXDB_URL = "http://127.0.0.1:9"  # nothing listens there
    client.force_login(world["viewer"])
    response = client.get("/health/targets/scratch-OST0003/")
    settings.INFLUXDB_URL = answering
    influx.ping()  # the outage noted ends here, not in the next test
    assert response.status_code == 200
    page = response.content.decode()
    assert "The array events cannot be read now: InfluxDB does not answer." in page
    assert "data-verdict" not in page
