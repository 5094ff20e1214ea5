"""Keeping the history for the set time (``RetentionSettings``): older changes of colour are
deleted and the logs of older finished jobs emptied, a batch at a time, by a periodic task.

What the alerting still needs stays: a change it has not processed yet, and each object's
latest change (the colour it still has; the rule backtest starts each object from it). Jobs
stay too, only their steps' logs and output go (``portal.jobs.services.prune_step_logs``).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from portal.health.models import RetentionSettings, StatusChange
from portal.jobs.services import prune_step_logs

log = logging.getLogger(__name__)

# Rows deleted (or jobs emptied) per statement: a 100-SSU rack's first pruning after an upgrade
# must not hold the database in one long transaction.
BATCH_ROWS = 1000


@dataclass
class Pruned:
    before: datetime
    status_changes: int = 0
    jobs: int = 0
    steps: int = 0

    def as_dict(self) -> dict:
        return {**asdict(self), "before": self.before.isoformat()}


def prune_status_changes(before: datetime, *, batch_size: int = BATCH_ROWS) -> int:
    """Delete the processed changes older than ``before`` that a newer change of the same
    object has replaced; returns how many went."""
    newer = StatusChange.objects.filter(key=OuterRef("key")).filter(
        Q(at__gt=OuterRef("at")) | Q(at=OuterRef("at"), pk__gt=OuterRef("pk"))
    )
    prunable = (
        StatusChange.objects.filter(at__lt=before, processed=True).filter(Exists(newer)).order_by()
    )
    deleted = 0
    while batch := list(prunable.values_list("pk", flat=True)[:batch_size]):
        count, _ = StatusChange.objects.filter(pk__in=batch).delete()
        deleted += count
    return deleted


def prune_history(now: datetime | None = None, *, batch_size: int = BATCH_ROWS) -> Pruned:
    """Delete what is older than the retention setting; logs what went."""
    days = RetentionSettings.load().history_days
    pruned = Pruned(before=(now or timezone.now()) - timedelta(days=days))
    pruned.status_changes = prune_status_changes(pruned.before, batch_size=batch_size)
    pruned.jobs, pruned.steps = prune_step_logs(pruned.before, batch_size=batch_size)
    log.info(
        "history older than %d days (before %s): deleted %d changes of colour, emptied the logs "
        "of %d jobs (%d steps)",
        days,
        pruned.before.isoformat(timespec="seconds"),
        pruned.status_changes,
        pruned.jobs,
        pruned.steps,
    )
    return pruned
