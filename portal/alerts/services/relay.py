"""The mail relay as a service of the appliance: a tile on the dashboard and a line of /healthz
(registered with ``portal.health.registry`` from the alerts app's ``AppConfig.ready``).

It is not ``required``: without it the appliance still watches and acts, and alert mail waits
in the outbox until the relay answers again (``/healthz`` names it without failing).
"""

from __future__ import annotations

import socket

from django.conf import settings
from django.db.utils import DatabaseError

from portal.alerts.choices import DeliveryStatus
from portal.alerts.models import Delivery, MailRelaySettings
from portal.health.services import appliance
from portal.health.services.appliance import ServiceState


def check_mail() -> ServiceState:
    """A TCP connection to the relay, no SMTP conversation: nothing for its logs, no login."""
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
        # The appliance's one timeout for every check, read now (tests shorten it).
        timeout = appliance.CHECK_TIMEOUT_SECONDS
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        outbox = (
            f"; {waiting} alert mail{'s wait' if waiting != 1 else ' waits'} in the outbox"
            if waiting
            else ""
        )
        detail = f"no answer at {where}: {error.strerror or error}{outbox}"
        return ServiceState("mail", False, detail, extra, required=False)
    return ServiceState("mail", True, f"relay at {where} accepts connections", extra, False)
