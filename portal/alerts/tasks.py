"""Periodic work of the alerts app: a thin shell around the outbox."""

from __future__ import annotations

from celery import shared_task

from portal.alerts.services.outbox import deliver_due


@shared_task(name="alerts.deliver", ignore_result=True)
def deliver() -> dict:
    """Send the alert mail that is due (oldest first; failed attempts wait their turn)."""
    result = deliver_due()
    return {"sent": len(result.sent), "postponed": len(result.postponed)}
