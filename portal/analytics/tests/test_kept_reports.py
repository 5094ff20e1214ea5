"""The reports of the last hour, day and week are kept and renewed by the worker
(``portal.analytics.cached``): the API and the pages say how old the report they show is, a
due report is shown while the worker computes a new one, and nothing kept outlives the settings
it was computed with."""

from __future__ import annotations

import time

import pytest

from portal import influxdb as influx
from portal.analytics import cached, tasks
from portal.analytics.tests.test_analytics_api import five_minutes  # noqa: F401
from sensors.lineproto import line, series

pytestmark = [pytest.mark.services, pytest.mark.django_db]
REPORT = "/api/v1/analytics/report/?window=1h"


@pytest.fixture
def asked(monkeypatch):
    """The reports the worker was asked for, instead of a broker's queue: the test then runs
    the task as the worker would."""
    sent: list[tuple] = []
    monkeypatch.setattr(tasks.refresh_report, "delay", lambda *args: sent.append(args))
    return sent


def late_job() -> None:
    """A job that starts writing after the first report: 8 GiB on OST0001 in 10 s."""
    now = int(time.time())
    tags = {"fs": "scratch", "target": "OST0001", "server": "oss02", "jobid": "late.3"}
    influx.write_lines(
        [
            line(series("ost_job", tags), {"write_bytes": value, "write_calls": 1}, t * 10**9)
            for t, value in ((now - 11, 0), (now - 1, 8 * 2**30))
        ],
        precision="n",
    )


def jobs(body: dict) -> set[str]:
    return {job["jobid"] for job in body["top_jobs"]}


def test_the_api_says_how_old_the_kept_report_is_and_the_worker_renews_it(
    five_minutes,  # noqa: F811
    client,
    world,
    asked,
    monkeypatch,
):
    client.force_login(world["viewer"])
    first = client.get(REPORT).json()
    assert first["cached"]["age_seconds"] < 5
    assert first["cached"]["refreshing"] is False
    assert jobs(first) == {"hot.1", "wide.2"}

    late_job()
    again = client.get(REPORT).json()
    # The kept report, older now: the late job is not in it yet, and it is not due.
    assert again["cached"]["computed_at"] == first["cached"]["computed_at"]
    assert again["cached"]["age_seconds"] >= first["cached"]["age_seconds"]
    assert jobs(again) == {"hot.1", "wide.2"}
    assert asked == []

    # Due: the page's request shows the kept report and asks the worker for a new one, once.
    monkeypatch.setitem(cached.REFRESH_SECONDS, "1h", 0)
    due = client.get(REPORT).json()
    assert due["cached"]["computed_at"] == first["cached"]["computed_at"]
    assert due["cached"]["refreshing"] is True
    assert client.get(REPORT).json()["cached"]["refreshing"] is True
    assert asked == [("1h", None)]  # the world has no filesystem: all of them
    assert tasks.refresh_report(*asked[0]) is True

    monkeypatch.setitem(cached.REFRESH_SECONDS, "1h", 60)
    renewed = client.get(REPORT).json()
    assert renewed["cached"]["computed_at"] > first["cached"]["computed_at"]
    assert renewed["cached"]["refreshing"] is False
    assert "late.3" in jobs(renewed)


def test_the_worker_keeps_renewing_the_reports_someone_looks_at(
    five_minutes,  # noqa: F811
    client,
    world,
    asked,
    monkeypatch,
):
    # Nobody asked for a report: the worker's round computes none.
    assert tasks.refresh_wanted() == []
    client.force_login(world["viewer"])
    first = client.get(REPORT).json()
    assert tasks.refresh_wanted() == []  # asked for, but not due
    monkeypatch.setitem(cached.REFRESH_SECONDS, "1h", 0)
    late_job()
    assert tasks.refresh_wanted() == ["1h (all)"]
    monkeypatch.setitem(cached.REFRESH_SECONDS, "1h", 60)
    renewed = client.get(REPORT).json()
    assert renewed["cached"]["computed_at"] > first["cached"]["computed_at"]
    assert "late.3" in jobs(renewed)
    assert asked == []  # the worker's round did it; no page had to ask


def test_a_report_too_old_to_show_is_computed_for_the_request(
    five_minutes,  # noqa: F811
    client,
    world,
    asked,
    monkeypatch,
):
    # The worker is down: the kept report ages past what may be shown.
    client.force_login(world["viewer"])
    first = client.get(REPORT).json()
    late_job()
    monkeypatch.setitem(cached.SHOW_AT_MOST_SECONDS, "1h", 0)
    fresh = client.get(REPORT).json()
    assert fresh["cached"]["computed_at"] > first["cached"]["computed_at"]
    assert fresh["cached"]["refreshing"] is False
    assert "late.3" in jobs(fresh)


def test_new_settings_are_never_answered_with_a_report_of_the_old_ones(
    five_minutes,  # noqa: F811
    client,
    world,
    asked,
):
    from portal.analytics.models import AnalyticsSettings

    client.force_login(world["viewer"])
    assert client.get(REPORT).json()["overloaded"] == ["oss01"]
    row = AnalyticsSettings.load()
    row.overload_margin_percent = 500  # no OSS carries six times the mean
    row.save()
    assert client.get(REPORT).json()["overloaded"] == []


def test_a_range_is_computed_for_its_request(five_minutes, client, world):  # noqa: F811
    start, _ = five_minutes
    client.force_login(world["viewer"])
    body = client.get(f"/api/v1/analytics/report/?since={start}&until={start + 300}").json()
    assert body["cached"] is None
    assert jobs(body) == {"hot.1", "wide.2"}


def test_the_page_says_when_its_report_was_computed_and_that_a_newer_one_comes(
    five_minutes,  # noqa: F811
    client,
    world,
    asked,
    monkeypatch,
):
    client.force_login(world["viewer"])
    page = client.get("/analytics/load/?window=1h").content.decode()
    assert " UTC, 0\xa0minutes ago" in page  # the appliance's time zone (OSTARA_TIME_ZONE)
    assert "a newer report is being computed" not in page
    monkeypatch.setitem(cached.REFRESH_SECONDS, "1h", 0)
    page = client.get("/analytics/load/?window=1h").content.decode()
    assert "a newer report is being computed" in page
