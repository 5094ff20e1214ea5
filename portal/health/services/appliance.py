"""The state of the appliance's own services: database, Redis, InfluxDB, Celery workers, and
those other apps register (``portal.health.registry``): the mail relay it sends alerts through.

Each check answers within a few seconds even when its service hangs, and says in words what is
wrong, so ``/healthz`` and the dashboard can name the service that is down. A check of another
app may be not ``required`` (the mail relay): ``/healthz`` names it without failing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import redis
from django.conf import settings
from django.db import connection
from django.db.utils import DatabaseError

from portal import influxdb as influx
from portal.health import registry
from workers.celery_app import app

CHECK_TIMEOUT_SECONDS = 2.0


@dataclass
class ServiceState:
    name: str
    ok: bool
    detail: str
    extra: dict = field(default_factory=dict)
    required: bool = True  # the appliance cannot do its work without it

    def as_dict(self) -> dict:
        return asdict(self)


def check_database() -> ServiceState:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        return ServiceState("database", False, f"query failed: {error}")
    return ServiceState("database", True, f"{connection.vendor} answers")


def _redis() -> redis.Redis:
    return redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=CHECK_TIMEOUT_SECONDS,
        socket_connect_timeout=CHECK_TIMEOUT_SECONDS,
    )


def check_redis() -> ServiceState:
    try:
        _redis().ping()
    except redis.RedisError as error:
        where = _public_url(settings.REDIS_URL)
        return ServiceState("redis", False, f"no answer at {where}: {error}")
    return ServiceState("redis", True, "answers PING")


def check_influxdb() -> ServiceState:
    try:
        version = influx.ping()
    except influx.InfluxError as error:
        since = influx.unavailable_since()
        when = f" since {since.isoformat(timespec='seconds')}" if since else ""
        return ServiceState(
            "influxdb",
            False,
            f"no answer at {settings.INFLUXDB_URL}{when}: {type(error).__name__}",
        )
    return ServiceState("influxdb", True, f"InfluxDB {version} answers")


def check_workers() -> ServiceState:
    try:
        replies = app.control.ping(timeout=CHECK_TIMEOUT_SECONDS)
    except Exception as error:  # kombu raises many types when the broker is gone
        return ServiceState("workers", False, f"cannot reach the broker: {error}")
    names = sorted(name for reply in replies for name in reply)
    if not names:
        return ServiceState("workers", False, "no Celery worker answered")
    return ServiceState("workers", True, f"{len(names)} worker(s) answer", {"workers": names})


def check_all(include_workers: bool = True) -> list[ServiceState]:
    states = [check_database(), check_redis(), check_influxdb()]
    if include_workers:
        # Without a broker there is no way to reach a worker; say so once, under redis.
        if states[1].ok:
            states.append(check_workers())
        else:
            states.append(ServiceState("workers", False, "unknown: Redis (the broker) is down"))
    # Services another app depends on (the mail relay, from alerts), in the order registered.
    states += [check() for check in registry.service_checks()]
    return states


def _public_url(url: str) -> str:
    """The URL without a password, fit for a page or a log."""
    parsed = redis.connection.urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url
