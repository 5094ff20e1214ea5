"""The analytics reports the worker keeps fresh (``portal.analytics.cached``)."""

from __future__ import annotations

from celery import shared_task

from portal.analytics import cached
from portal.inventory.models import Filesystem


@shared_task(name="analytics.refresh_report", ignore_result=True)
def refresh_report(label: str, fs: str | None) -> bool:
    """A page found the window's report due: compute it again (unless another did)."""
    filesystem = Filesystem.objects.filter(name=fs).first() if fs else None
    if fs and filesystem is None:
        return False  # the filesystem went away since
    return cached.refresh(label, filesystem)


@shared_task(name="analytics.refresh", ignore_result=True)
def refresh_wanted() -> list[str]:
    """Every report asked for in the last hour and due, computed again."""
    return cached.refresh_wanted()
