"""The dashboard's refresh, /api/v1/health/ and the charts at rack scale: built once per version
of the cached colours, answered 304 to a browser that has them, and a chart's data reused for the
next browser within the refresh. On points in the sensors' schema in the real test InfluxDB."""

from __future__ import annotations

import re
import time

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from portal.health import views
from portal.health.models import Evaluation, HealthStatus, StatusChange
from portal.health.services import evaluation
from portal.health.services.evaluation import REMEMBERED, cached_rows, evaluate_and_store
from portal.health.services.metrics import newest
from portal.health.tests.metrics import RackMetrics
from portal.inventory.models import Drive, Target

pytestmark = pytest.mark.services


@pytest.fixture
def rack(evaluated_rack):
    return evaluated_rack


def fail_a_drive(rack: RackMetrics) -> None:
    drive = Drive.objects.filter(volume_group__name="ssu01-a-vg02").select_related(
        "enclosure__array"
    )[0]
    rack.failed_drives = {
        (drive.enclosure.array.name, drive.enclosure.position, drive.drawer, drive.slot)
    }


def a_drive_fails(rack: RackMetrics) -> None:
    """A drive of ssu01-a-vg02 fails, the sensors report it and the engine evaluates."""
    fail_a_drive(rack)
    rack.write(time.time())
    evaluate_and_store()


def test_a_steady_rack_writes_nothing_and_keeps_its_version(rack):
    version = Evaluation.objects.get().version
    rows = {row.key: (row.status, row.reasons) for row in HealthStatus.objects.all()}
    result = evaluate_and_store(now=time.time() - 10)  # the same points again
    assert result.changes == []
    assert Evaluation.objects.get().version == version
    assert {row.key: (row.status, row.reasons) for row in HealthStatus.objects.all()} == rows
    assert set(result.phases) == {"influxdb", "facts", "rules", "store", "inventory"}


def test_the_refresh_answers_304_until_a_colour_changes(client, world, rack):
    client.login(username="viewer", password="pw-viewer-123!")
    first = client.get("/health/overview/")
    etag = first.headers["ETag"]
    assert 'data-name="scratch-OST0002" data-status="green"' in first.content.decode()
    assert client.get("/health/overview/", HTTP_IF_NONE_MATCH=etag).status_code == 304

    a_drive_fails(rack)
    again = client.get("/health/overview/", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 200
    assert again.headers["ETag"] != etag
    assert 'data-name="scratch-OST0002" data-status="orange"' in again.content.decode()


def test_a_version_built_by_one_portal_process_is_read_by_the_others(client, world, rack):
    """Three gunicorn workers, one tree, one set of tiles and one list of the latest changes
    per version: a process that has not built this version reads what another built from
    Redis, not the colours' rows nor the changes'."""
    client.login(username="viewer", password="pw-viewer-123!")
    built = client.get("/").content.decode()
    evaluation._built = None  # another process: none of this version in its memory
    views._tiles.clear()
    with CaptureQueriesContext(connection) as queries:
        again = client.get("/").content.decode()
    assert not [q["sql"] for q in queries if _reads_the_colours(q["sql"])]
    assert len(_tiles_html(built)) > 10 and _tiles_html(again) == _tiles_html(built)
    assert 'data-name="scratch-OST0002" data-status="green"' in again
    assert again[again.index("Latest changes") :] == built[built.index("Latest changes") :]

    a_drive_fails(rack)  # a new version: built from the rows again, once
    with CaptureQueriesContext(connection) as queries:
        changed = client.get("/").content.decode()
    assert [q["sql"] for q in queries if _reads_the_colours(q["sql"])]
    assert 'data-name="scratch-OST0002" data-status="orange"' in changed
    latest = changed[changed.index("Latest changes") :]
    assert "scratch-OST0002" in latest and "ssu01-a-vg02" in latest


def _reads_the_colours(sql: str) -> bool:
    return any(table in sql for table in (HealthStatus._meta.db_table, StatusChange._meta.db_table))


def _tiles_html(page: str) -> list[str]:
    return re.findall(r'<(?:a|span) class="cell [^>]*>[^<]*</(?:a|span)>', page)


def test_the_health_api_answers_304_until_a_colour_changes(client, world, rack):
    client.login(username="viewer", password="pw-viewer-123!")
    first = client.get("/api/v1/health/")
    etag = first.headers["ETag"]
    assert first.json()["filesystems"][0]["status"] == "green"
    assert client.get("/api/v1/health/", HTTP_IF_NONE_MATCH=etag).status_code == 304

    a_drive_fails(rack)
    again = client.get("/api/v1/health/", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 200
    assert again.json()["filesystems"][0]["status"] == "orange"


def test_chart_data_is_reused_within_the_refresh_and_read_again_after(client, world, rack):
    client.login(username="viewer", password="pw-viewer-123!")
    url = "/health/charts/capacity/?kind=filesystem&name=scratch"
    settings.HEALTH_CHART_CACHE_SECONDS = 60
    before = client.get(url).json()["total"]["used_tb"]
    rack.fill_percent = {label: 90.0 for label in Target.objects.values_list("label", flat=True)}
    rack.write(time.time())
    assert client.get(url).json()["total"]["used_tb"] == before  # the same data, reused
    settings.HEALTH_CHART_CACHE_SECONDS = 0
    assert client.get(url).json()["total"]["used_tb"] > before


def test_the_newest_point_of_each_series_of_a_flat_answer():
    points = [
        {"time": 1, "target": "scratch-OST0000", "server": "oss01", "kbytes_free": 9},
        {"time": 1, "target": "scratch-OST0001", "server": None, "kbytes_free": 8},
        {"time": 2, "target": "scratch-OST0000", "server": "oss01", "kbytes_free": 7},
        {"time": 2, "target": "scratch-OST0000", "server": "oss02", "kbytes_free": 6},
    ]
    assert newest(points, ("target", "server")) == [
        {"time": 2, "target": "scratch-OST0000", "server": "oss01", "kbytes_free": 7},
        {"time": 1, "target": "scratch-OST0001", "server": "", "kbytes_free": 8},
        {"time": 2, "target": "scratch-OST0000", "server": "oss02", "kbytes_free": 6},
    ]


def test_the_colours_a_round_remembers_are_those_it_stored(rack):
    fail_a_drive(rack)
    rack.write(time.time())
    assert evaluate_and_store().changes  # the OST, its array and their parents change
    assert REMEMBERED.rows == cached_rows()
    assert REMEMBERED.rows_now() is REMEMBERED.rows  # the next round reads no rows
    HealthStatus.objects.filter(kind="target").first().delete()  # written by someone else
    assert REMEMBERED.rows_now() == cached_rows()
