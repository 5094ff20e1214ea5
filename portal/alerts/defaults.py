"""The rules a new appliance starts with, so it alerts out of the box (DESIGN.md §8).

Every rule groups its alerts by the place of their cause (``group_by`` "auto": the SSU or server
pair), so one fault is one mail however many objects it touches. They go to the address of
``OSTARA_ALERT_MAIL_TO`` (root@localhost unless set) until an administrator adds recipients in
the alert console. Each keeps its ``builtin`` slug, so an edited default is never installed
again over the edit.
"""

from __future__ import annotations

HOUR = 3600

DEFAULT_RULES = (
    {
        "builtin": "anything-red",
        "name": "Anything red",
        "severity": "critical",
        "health_state": "red",
        "clear_seconds": 60,
        "repeat_seconds": 4 * HOUR,
    },
    {
        "builtin": "target-on-partner",
        "name": "Target on its failover server",
        "severity": "warning",
        "health_state": "on_partner",
        "for_seconds": 60,
        "clear_seconds": 60,
        "repeat_seconds": 24 * HOUR,
    },
    {
        "builtin": "ost-full",
        "name": "OST fuller than the capacity threshold",
        "severity": "warning",
        "health_state": "full",
        "clear_seconds": 600,
        "repeat_seconds": 24 * HOUR,
    },
    {
        "builtin": "sensor-silent",
        "name": "Sensor silent",
        "severity": "critical",
        "health_state": "silent",
        "clear_seconds": 60,
        "repeat_seconds": 4 * HOUR,
    },
    {
        "builtin": "volume-group",
        "name": "Volume group degraded, critical or failed",
        "severity": "warning",
        "health_state": "volume_group",
        "clear_seconds": 60,
        "repeat_seconds": 12 * HOUR,
    },
    {
        "builtin": "temperature",
        "name": "Temperature above its threshold",
        "severity": "warning",
        "health_state": "hot",
        "for_seconds": 60,
        "clear_seconds": 300,
        "repeat_seconds": 12 * HOUR,
    },
    {
        # A failed controller, a lost fencing level or BMC, a degraded SAS path, a failed
        # drawer: nothing stops yet, but a part must be ordered. One mail per incident group.
        "builtin": "redundancy-lost",
        "name": "Redundancy lost",
        "severity": "warning",
        "health_state": "redundancy",
        "for_seconds": 60,
        "clear_seconds": 60,
        "repeat_seconds": 24 * HOUR,
    },
)


def install(rule_model, address: str, only: tuple[str, ...] = ()) -> int:
    """Create the default rules that do not exist yet (``only``: those of these ``builtin``
    slugs); return how many were created."""
    created = 0
    for spec in DEFAULT_RULES:
        if only and spec["builtin"] not in only:
            continue
        if rule_model.objects.filter(builtin=spec["builtin"]).exists():
            continue
        if rule_model.objects.filter(name=spec["name"]).exists():
            continue  # an administrator's own rule took the name
        rule_model.objects.create(condition="health", extra_addresses=address, **spec)
        created += 1
    return created
