"""The reports of the windows the pages offer (``choices.WINDOWS``: the last hour, day, week),
kept per filesystem in Redis and computed again by the worker, so that a page or an API call
answers at once on a rack of thousands of OSTs, whose day takes seconds to compute.

A report asked for is answered from the cache with its age (``cached``). When it is older than
its window's refresh period, the worker is asked to compute it again (once, whoever asks) and
the old one is answered meanwhile; the worker's periodic ``analytics.refresh`` also keeps every
report asked for in the last hour fresh, so the next visitor finds a young one. A report is
computed in the request only when none is kept, when it is too old to show (the worker has not
renewed it), or when Redis is down. A range given as since/until is computed for its request.
While InfluxDB does not answer, a kept report young enough is shown with the outage named
(``unavailable``); without one the answer is the outage itself, as for every metric.

The cache key holds when the analytics and health settings were last saved: a report computed
with other thresholds is never shown.
"""

from __future__ import annotations

import logging
import time

import redis
from django.core.cache import cache

from portal import influxdb as influx
from portal.analytics import choices, services
from portal.analytics.models import AnalyticsSettings
from portal.health.models import HealthSettings
from portal.inventory.models import Filesystem

log = logging.getLogger(__name__)

# How old a window's report may be before it is computed again (seconds).
REFRESH_SECONDS = {"1h": 60, "24h": 300, "7d": 1800}
# Older than this, a report is not shown: it is computed in the request (the worker is down).
SHOW_AT_MOST_SECONDS = {label: 4 * seconds for label, seconds in REFRESH_SECONDS.items()}
# A report nobody asked for in this long is no longer refreshed by the worker.
WANTED_SECONDS = 3600
# How long one computation may hold a report before another may start it.
COMPUTING_SECONDS = 600
KEEP_SECONDS = 2 * 86400


def report(window: services.Window, filesystem: Filesystem | None) -> dict:
    """The report of the window; ``cached`` says when it was computed, how old it is and
    whether a newer one is being computed (None: computed for this request)."""
    if window.label not in REFRESH_SECONDS:
        return {**services.report(window, filesystem), "cached": None}
    name = _name(window.label, filesystem)
    try:
        cache.set(f"{name}:wanted", 1, timeout=WANTED_SECONDS)
        kept = cache.get(name)
    except redis.RedisError as error:
        log.warning("no shared cache (%s): the %s report is computed here", error, window.label)
        return {**services.report(window, filesystem), "cached": None}
    now = time.time()
    if kept is None or now - kept[1] > SHOW_AT_MOST_SECONDS[window.label]:
        body, computed = _compute(window.label, filesystem, name)
        return {**body, "cached": _age(computed, time.time(), refreshing=False)}
    body, computed = kept
    if influx.unavailable_since() is not None:
        # Nothing newer can be computed: the kept report, saying why it is not renewed.
        return {**body, "cached": _age(computed, now, False), "unavailable": _outage()}
    refreshing = False
    if now - computed >= REFRESH_SECONDS[window.label]:
        refreshing = _ask_worker(window.label, filesystem, name)
    return {**body, "cached": _age(computed, now, refreshing)}


def _outage() -> str:
    return f"{influx.unavailable_message()} This report was computed before."


def refresh(label: str, filesystem: Filesystem | None) -> bool:
    """Compute the report again unless a young one is kept; whether it was computed. Lets go
    of the report's ``computing`` mark either way."""
    name = _name(label, filesystem)
    try:
        kept = cache.get(name)
        if kept is not None and time.time() - kept[1] < REFRESH_SECONDS[label]:
            return False
        _compute(label, filesystem, name)
        return True
    finally:
        cache.delete(f"{name}:computing")


def refresh_wanted() -> list[str]:
    """The worker's round: every report asked for in the last hour and due, computed again.
    What was computed ("24h scratch", ...)."""
    done = []
    filesystems: list[Filesystem | None] = list(Filesystem.objects.order_by("name")) or [None]
    for filesystem in filesystems:
        for label in REFRESH_SECONDS:
            name = _name(label, filesystem)
            if not cache.get(f"{name}:wanted"):
                continue
            if not cache.add(f"{name}:computing", 1, timeout=COMPUTING_SECONDS):
                continue  # a request's task is on it
            if refresh(label, filesystem):
                done.append(f"{label} {filesystem.name if filesystem else '(all)'}")
    return done


def _compute(label: str, filesystem: Filesystem | None, name: str) -> tuple[dict, float]:
    """The window's report computed now, kept; with when it was done."""
    now = time.time()
    body = services.report(services.Window(now - choices.WINDOWS[label], now, label), filesystem)
    computed = time.time()
    try:
        cache.set(name, (body, computed), timeout=KEEP_SECONDS)
    except redis.RedisError as error:
        log.warning("no shared cache (%s): the %s report is not kept", error, label)
    return body, computed


def _ask_worker(label: str, filesystem: Filesystem | None, name: str) -> bool:
    """Ask the worker for a new report unless one is being computed; whether one is."""
    from portal.analytics.tasks import refresh_report

    if cache.add(f"{name}:computing", 1, timeout=COMPUTING_SECONDS):
        try:
            refresh_report.delay(label, filesystem.name if filesystem else None)
        except Exception as error:  # kombu raises many types when the broker is gone
            cache.delete(f"{name}:computing")
            log.warning("the %s report cannot be renewed by the worker: %s", label, error)
            return False
    return True


def _age(computed: float, now: float, refreshing: bool) -> dict:
    return {
        "computed_at": computed,
        "age_seconds": round(max(0.0, now - computed), 1),
        "refreshing": refreshing,
    }


def _name(label: str, filesystem: Filesystem | None) -> str:
    """The report's key, with when the settings it depends on were last saved."""
    saved = "-".join(
        str(int(row.updated.timestamp() * 1000))
        for row in (AnalyticsSettings.load(), HealthSettings.load())
    )
    return f"analytics:report:{label}:{filesystem.name if filesystem else ''}:{saved}"
