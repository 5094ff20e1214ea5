"""What the apps above health tell it: the checks of services they depend on, and the servers
they took out of service. Health owns the registry and knows none of those apps; each registers
from its ``AppConfig.ready`` (as job kinds do in ``portal/jobs/registry.py``), e.g. the alerts
app::

    register_service_check(check_mail)  # a tile on the dashboard, a line of /healthz

``signals.py`` is the other direction: what health tells them after each evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from portal.health.services.appliance import ServiceState


class MaintenanceWindow(NamedTuple):
    """A server in maintenance as the health facts say it: when its window ends, and why."""

    ends: datetime
    reason: str


_SERVICE_CHECKS: list[Callable[[], ServiceState]] = []
_MAINTENANCE: list[Callable[[], dict[int, MaintenanceWindow]]] = []


def register_service_check(check: Callable[[], ServiceState]) -> None:
    """Add a service to the dashboard's tiles and /healthz, after the appliance's own ones."""
    if check not in _SERVICE_CHECKS:
        _SERVICE_CHECKS.append(check)


def service_checks() -> list[Callable[[], ServiceState]]:
    return list(_SERVICE_CHECKS)


def register_maintenance(windows: Callable[[], dict[int, MaintenanceWindow]]) -> None:
    """``windows()``: the open maintenance windows by server primary key."""
    if windows not in _MAINTENANCE:
        _MAINTENANCE.append(windows)


def maintenance_windows() -> dict[int, MaintenanceWindow]:
    """Every open maintenance window, by server primary key."""
    found: dict[int, MaintenanceWindow] = {}
    for windows in _MAINTENANCE:
        found.update(windows())
    return found
