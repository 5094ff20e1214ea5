"""Periodic work of the alerts app: thin shells around the evaluation and the outbox."""

from __future__ import annotations

import logging

from celery import shared_task

from portal.alerts.services.evaluation import evaluate_round
from portal.alerts.services.observation import HealthIndex
from portal.alerts.services.outbox import deliver_due

log = logging.getLogger(__name__)

# A mail queued by a round goes out within this many seconds, or at the next periodic delivery.
DELIVER_EXPIRES_SECONDS = 30.0


@shared_task(name="alerts.evaluate", ignore_result=True)
def evaluate() -> dict:
    """Advance every rule's events from the colours stored last and the newest metrics, then
    send what that produced (by hand; after each health evaluation the round runs on what
    health hands over, ``after_health_evaluation``)."""
    result = evaluate_round()
    sent = deliver_due()
    return {
        "rules": result.rules,
        "transitions": len(result.transitions),
        "incident_mails": len(result.mails),
        "seconds": round(result.seconds, 3),
        "sent": len(sent.sent),
    }


@shared_task(name="alerts.deliver", ignore_result=True)
def deliver() -> dict:
    """Send the alert mail that is due (oldest first; temporary failures wait their turn)."""
    result = deliver_due()
    return {
        "sent": len(result.sent),
        "postponed": len(result.postponed),
        "failed": len(result.failed),
    }


def after_health_evaluation(sender, result, **kwargs) -> None:
    """Connected to ``portal.health.signals.evaluated``: the alert round follows each
    evaluation, in the same worker, on the colours it hands over (``result.trees``) instead of
    reading back the rows it has just written. The mail it queued is sent by a task of its own,
    so a slow mail relay never holds the next evaluation."""
    try:
        round_result = evaluate_round(health=HealthIndex.of_trees(result.trees))
        if round_result.deliveries:
            deliver.apply_async(expires=DELIVER_EXPIRES_SECONDS)
    except Exception:  # the colours are stored whatever alerting makes of them; queued mail
        # waits in the outbox for the periodic delivery when the broker refused the hand-off
        log.exception("alert round after the health evaluation failed")
