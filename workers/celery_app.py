"""The Celery app of the workers (jobs, surveys, health, alerts).

Configuration comes from Django's settings (the ``CELERY_`` group): Redis as broker and result
backend, JSON only, time limits fit for long provisioning runs, the beat schedule.
"""

from __future__ import annotations

import functools
import logging
import os
import time

from celery import Celery
from celery.signals import worker_process_init
from kombu.transport import redis as redis_transport
from kombu.transport import virtual
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from workers import heap

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("ostara")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The default for every thread, not only this one: shared tasks sent from a web server's
# worker threads must find this app, not Celery's unconfigured fallback (AMQP on localhost).
app.set_default()


log = logging.getLogger(__name__)

# How long an acknowledgement is tried again while Redis does not answer (a hung or restarting
# Redis), before the message is given up here and left to Redis's visibility timeout.
ACK_RETRY_SECONDS = 60.0


def _ack_until_redis_answers(ack):
    """Kombu's Redis transport removes a finished message from Redis's "unacked" index before it
    forgets the message in the worker; when Redis does not answer, it raises first, and the
    message stays counted as being worked on. With one message at a time (``acks_late``,
    prefetch 1: ours), the worker then takes no other message, ever: a Redis hung for 5 s
    stopped every job and health round until the worker was restarted. The acknowledgement is
    tried again until Redis answers; after ``ACK_RETRY_SECONDS`` the message is forgotten here
    all the same (the worker goes on), and Redis gives it back to a worker once its visibility
    timeout has passed (run again: our tasks are idempotent, a finished job is not rerun)."""

    @functools.wraps(ack)
    def ack_or_release(qos, delivery_tag, *args, **kwargs):
        deadline = time.monotonic() + ACK_RETRY_SECONDS
        while True:
            try:
                return ack(qos, delivery_tag, *args, **kwargs)
            except (RedisConnectionError, RedisTimeoutError) as error:
                if time.monotonic() >= deadline:
                    virtual.QoS.ack(qos, delivery_tag)  # forgotten here: the worker goes on
                    log.error(
                        "message %s not acknowledged in Redis for %.0f s (%s): taking the next; "
                        "Redis gives it back after its visibility timeout",
                        delivery_tag,
                        ACK_RETRY_SECONDS,
                        error,
                    )
                    raise
                log.warning("acknowledging message %s: %s; trying again", delivery_tag, error)
                time.sleep(1.0)

    return ack_or_release


redis_transport.QoS.ack = _ack_until_redis_answers(redis_transport.QoS.ack)
redis_transport.QoS.reject = _ack_until_redis_answers(redis_transport.QoS.reject)


@worker_process_init.connect
def _settle_heap(**_kwargs) -> None:
    """Each pool process, once forked (the tasks' modules were imported before): its start-up
    heap frozen (``workers.heap``), so a health round's full collections walk only what the
    rounds made."""
    log.debug("%d objects of the start-up heap frozen", heap.settle())
