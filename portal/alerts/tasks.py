"""Periodic work of the alerts app: thin shells around the evaluation and the outbox."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from portal.alerts.services.evaluation import evaluate_round
from portal.alerts.services.outbox import deliver_due


@shared_task(name="alerts.evaluate", ignore_result=True)
def evaluate() -> dict:
    """Advance every rule's events from the colours just stored and the newest metrics, then
    send what that produced."""
    result = evaluate_round()
    sent = deliver_due()
    return {
        "rules": result.rules,
        "transitions": len(result.transitions),
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


def after_health_evaluation(sender, **kwargs) -> None:
    """Connected to ``portal.health.signals.evaluated``: alerts follow each evaluation."""
    evaluate.apply_async(expires=float(settings.HEALTH_EVALUATE_SECONDS))
