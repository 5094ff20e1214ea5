"""Periodic and on-demand work of the health app."""

from __future__ import annotations

from celery import shared_task

from portal.health.services import check_all


@shared_task(name="health.probe_services")
def probe_services() -> dict:
    """The services as a worker sees them (database, Redis, InfluxDB)."""
    return {state.name: state.as_dict() for state in check_all(include_workers=False)}
