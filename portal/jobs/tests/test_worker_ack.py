"""A worker whose acknowledgement meets a Redis that does not answer (hung, restarting) goes on
taking messages: kombu's Redis transport left such a message counted as in hand, and with one
message at a time (``acks_late``, prefetch 1) the worker took no other, ever (``workers.
celery_app``). Against the test profile's real Redis, through kombu as the worker uses it."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings
from kombu import Connection
from redis.exceptions import TimeoutError as RedisTimeoutError

from workers import celery_app

pytestmark = pytest.mark.services


@pytest.fixture
def in_hand(services):
    """A message taken as the worker takes one: prefetch 1, acknowledged when done."""
    with Connection(
        settings.CELERY_BROKER_URL, transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS
    ) as connection:
        queue = connection.SimpleQueue(f"ack-test-{uuid.uuid4().hex}")
        try:
            queue.consumer.qos(prefetch_count=1)
            queue.put({"job": 1})
            message = queue.get(timeout=10)
            qos = queue.channel.qos
            assert not qos.can_consume()  # one in hand: no other is taken meanwhile
            yield message, qos, queue.channel.client
        finally:
            queue.clear()
            queue.close()


def redis_silent_for(monkeypatch, qos, tries: int | None) -> list:
    """Redis does not answer the first ``tries`` acknowledgements (None: any)."""
    calls, real = [], qos._remove_from_indices

    def remove(delivery_tag, pipe=None):
        calls.append(delivery_tag)
        if tries is None or len(calls) <= tries:
            raise RedisTimeoutError("Timeout reading from socket")
        return real(delivery_tag, pipe)

    monkeypatch.setattr(qos, "_remove_from_indices", remove)
    return calls


def test_an_acknowledgement_redis_did_not_answer_is_made_once_it_does(in_hand, monkeypatch):
    message, qos, client = in_hand
    calls = redis_silent_for(monkeypatch, qos, tries=2)
    message.ack()
    assert len(calls) == 3
    assert qos.can_consume()  # the worker takes the next message
    assert not client.hexists(qos.unacked_key, message.delivery_tag)  # done in Redis too


def test_a_redis_that_never_answers_leaves_the_message_to_it_and_the_worker_goes_on(
    in_hand, monkeypatch, caplog
):
    message, qos, client = in_hand
    monkeypatch.setattr(celery_app, "ACK_RETRY_SECONDS", 2.0)
    calls = redis_silent_for(monkeypatch, qos, tries=None)
    with pytest.raises(RedisTimeoutError):
        message.ack()
    assert len(calls) >= 2
    assert qos.can_consume()
    # Still in Redis's unacked index: given back to a worker after the visibility timeout.
    assert client.hexists(qos.unacked_key, message.delivery_tag)
    assert "Redis gives it back after its visibility timeout" in caplog.text
