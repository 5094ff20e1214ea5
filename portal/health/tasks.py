"""Periodic and on-demand work of the health app."""

from __future__ import annotations

from celery import shared_task

from portal.health.services import check_all
from portal.health.services.evaluation import evaluate_and_store
from portal.health.services.retention import prune_history
from portal.health.signals import evaluated


@shared_task(name="health.probe_services")
def probe_services() -> dict:
    """The services as a worker sees them (database, Redis, InfluxDB)."""
    return {state.name: state.as_dict() for state in check_all(include_workers=False)}


@shared_task(name="health.evaluate", ignore_result=True)
def evaluate() -> dict:
    """Colour every object of the rack from its latest facts; record the changes."""
    result = evaluate_and_store()
    evaluated.send(sender=evaluate, result=result)
    return {"objects": result.objects, "changes": len(result.changes), "seconds": result.seconds}


@shared_task(name="health.prune_history", ignore_result=True)
def prune_old_history() -> dict:
    """Delete the changes of colour and job logs older than the retention setting."""
    return prune_history().as_dict()
