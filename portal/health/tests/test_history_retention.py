"""The history is kept for the retention setting's days: older changes of colour go, what the
alerting still needs stays, job logs go with them, and the pruning runs by itself."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from portal.health.choices import NodeKind, Status
from portal.health.models import RetentionSettings, StatusChange
from portal.health.services.retention import prune_history, prune_status_changes
from portal.jobs.choices import JobState, StepState
from portal.jobs.models import Job
from portal.jobs.services import create_job
from portal.jobs.tests.actions import ONE_STEP

NOW = timezone.now()


def change(key: str, days_ago: float, new: str = Status.RED, processed: bool = True):
    return StatusChange.objects.create(
        key=key,
        kind=NodeKind.TARGET,
        name=key.replace("target:", "scratch-OST000"),
        old=Status.GREEN,
        new=new,
        at=NOW - timedelta(days=days_ago),
        processed=processed,
    )


def kept() -> set[int]:
    return set(StatusChange.objects.values_list("pk", flat=True))


@pytest.mark.django_db
def test_changes_older_than_the_setting_go_and_recent_ones_stay():
    old = change("target:1", 120)
    older = change("target:1", 95)
    recent = change("target:1", 30)
    latest = change("target:1", 1, new=Status.GREEN)

    pruned = prune_history(NOW)

    assert pruned.status_changes == 2
    assert kept() == {recent.pk, latest.pk}
    assert old.pk not in kept() and older.pk not in kept()


@pytest.mark.django_db
def test_a_change_the_alerting_has_not_processed_stays_however_old():
    change("target:1", 200)
    unprocessed = change("target:1", 150, processed=False)
    change("target:1", 1)

    prune_history(NOW)

    assert unprocessed.pk in kept()
    assert StatusChange.objects.count() == 2


@pytest.mark.django_db
def test_each_objects_latest_change_stays_however_old():
    """A target red for half a year keeps the change that made it red: its page's history and
    the alert backtest start from it."""
    red_since = change("target:2", 180)
    change("target:3", 300)
    green_since = change("target:3", 200, new=Status.GREEN)

    prune_history(NOW)

    assert kept() == {red_since.pk, green_since.pk}


@pytest.mark.django_db
def test_the_setting_moves_the_cutoff():
    recent = change("target:1", 10)
    change("target:1", 5)
    row = RetentionSettings.load()
    row.history_days = 7
    row.save()

    pruned = prune_history(NOW)

    assert pruned.status_changes == 1 and recent.pk not in kept()
    assert pruned.before == NOW - timedelta(days=7)


@pytest.mark.django_db
def test_changes_are_deleted_a_batch_at_a_time_until_none_is_left():
    for days in range(100, 107):
        change("target:1", days)
    change("target:1", 1)

    assert prune_status_changes(NOW - timedelta(days=90), batch_size=2) == 7
    assert StatusChange.objects.count() == 1


@pytest.mark.django_db
def test_the_periodic_task_prunes_changes_and_job_logs_together(caplog):
    from portal.health.tasks import prune_old_history

    change("target:1", 100)
    change("target:1", 1)
    job = create_job(ONE_STEP.kind, "Survey ssu01")
    Job.objects.filter(pk=job.pk).update(
        state=JobState.SUCCEEDED, finished=NOW - timedelta(days=100)
    )
    job.steps.update(state=StepState.SUCCEEDED, output="obdfilter-survey ...\n")

    with caplog.at_level("INFO", logger="portal.health.services.retention"):
        result = prune_old_history()

    assert (result["status_changes"], result["jobs"], result["steps"]) == (1, 1, 1)
    assert "deleted 1 changes of colour, emptied the logs of 1 jobs (1 steps)" in caplog.text
    job.refresh_from_db()
    assert job.logs_pruned is not None


def test_the_beat_schedule_runs_the_pruning_at_least_daily():
    from portal.health import tasks  # noqa: F401 - registers the task with the app
    from workers.celery_app import app

    entry = settings.CELERY_BEAT_SCHEDULE["health.prune_history"]
    assert entry["task"] == "health.prune_history"
    assert entry["task"] in app.tasks
    assert 0 < entry["schedule"] <= 24 * 3600


@pytest.mark.django_db
def test_history_is_kept_90_days_unless_an_administrator_says_otherwise():
    assert RetentionSettings.load().history_days == 90


@pytest.mark.django_db
@pytest.mark.parametrize("days", [0, 3651])
def test_the_setting_refuses_less_than_a_day_and_more_than_ten_years(days):
    row = RetentionSettings.load()
    row.history_days = days
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert list(refused.value.message_dict) == ["history_days"]


def test_an_admin_changes_the_retention_on_the_settings_page(client, world):
    client.login(username="admin", password="pw-admin-123!")
    page = client.get("/health/retention/").content.decode()
    assert "Keep history (days)" in page and 'value="90"' in page
    assert 'href="/health/retention/" aria-current="page"' in page  # a tab of Settings

    refused = client.post("/health/retention/", {"history_days": 0})
    assert refused.status_code == 200
    assert "keep the history at least 1 day" in refused.content.decode()
    assert RetentionSettings.load().history_days == 90

    saved = client.post("/health/retention/", {"history_days": 30})
    assert saved.status_code == 302
    assert RetentionSettings.load().history_days == 30


def test_a_viewer_sees_the_retention_but_cannot_change_it(client, world):
    client.login(username="viewer", password="pw-viewer-123!")
    page = client.get("/health/retention/").content.decode()
    assert "Only administrators change it." in page and "disabled" in page
    assert client.post("/health/retention/", {"history_days": 1}).status_code == 403
    assert RetentionSettings.load().history_days == 90
