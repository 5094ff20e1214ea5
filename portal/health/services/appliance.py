"""The state of the appliance's own services: database, Redis, InfluxDB, Celery workers, and the
mail relay it sends alerts through.

Each check answers within a few seconds even when its service hangs, and says in words what is
wrong, so ``/healthz`` and the dashboard can name the service that is down. The mail relay is
not ``required``: without it the appliance still watches and acts, and alert mail waits in the
outbox until the relay answers again (``/healthz`` names it without failing).
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass, field

import redis
from django.conf import settings
from django.db import connection
from django.db.utils import DatabaseError

from portal import influxdb as influx
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


def check_mail() -> ServiceState:
    """A TCP connection to the relay, no SMTP conversation: nothing for its logs, no login."""
    from portal.alerts.choices import DeliveryStatus
    from portal.alerts.models import Delivery, MailRelaySettings

    try:
        # The relay an administrator saved under Settings → Mail, else the environment's.
        relay = MailRelaySettings.current()
        host, port = relay.host, relay.port
        waiting = Delivery.objects.filter(status=DeliveryStatus.PENDING).count()
    except DatabaseError:
        host, port = settings.EMAIL_HOST, settings.EMAIL_PORT
        waiting = None
    where = f"{host}:{port}"
    extra = {"waiting": waiting}
    try:
        socket.create_connection((host, port), timeout=CHECK_TIMEOUT_SECONDS).close()
    except OSError as error:
        outbox = f"; {waiting} alert mail(s) wait in the outbox" if waiting else ""
        detail = f"no answer at {where}: {error.strerror or error}{outbox}"
        return ServiceState("mail", False, detail, extra, required=False)
    return ServiceState("mail", True, f"relay at {where} accepts connections", extra, False)


def check_all(include_workers: bool = True) -> list[ServiceState]:
    states = [check_database(), check_redis(), check_influxdb()]
    if include_workers:
        # Without a broker there is no way to reach a worker; say so once, under redis.
        if states[1].ok:
            states.append(check_workers())
        else:
            states.append(ServiceState("workers", False, "unknown: Redis (the broker) is down"))
    states.append(check_mail())
    return states


def _public_url(url: str) -> str:
    """The URL without a password, fit for a page or a log."""
    parsed = redis.connection.urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url
