"""Answers shared by the portal's processes in the test profile's Redis: computed once per
period, the previous answer while another process recomputes, and computed anyway without
Redis; what a key names whole (``once_per_key``) built once."""

from __future__ import annotations

import time
import uuid

import pytest
from django.core.cache import cache
from django.test import override_settings

from portal.web.shared_cache import once_per_key, reused

pytestmark = pytest.mark.services


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        return self.calls


def test_an_answer_is_computed_once_per_period(services):
    key, compute = f"test:{uuid.uuid4().hex}", Counter()
    assert [reused(key, 60, compute) for _ in range(3)] == [1, 1, 1]
    assert compute.calls == 1
    assert reused(key, 0, compute) == 2  # no period: every time


def test_past_its_period_it_is_recomputed_aside_and_the_last_answer_given_meanwhile(
    services, monkeypatch
):
    key, compute = f"test:{uuid.uuid4().hex}", Counter()
    reused(key, 5, compute)
    clock = time.time() + 10
    monkeypatch.setattr("portal.web.shared_cache.time.time", lambda: clock)
    cache.add(f"{key}:recomputing", 1, timeout=60)  # another process is recomputing
    assert reused(key, 5, compute) == 1 and compute.calls == 1
    cache.delete(f"{key}:recomputing")
    assert reused(key, 5, compute) == 1  # the last answer at once, the new one computed aside
    deadline = time.monotonic() + 10
    while cache.get(key)[0] != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    monkeypatch.setattr("portal.web.shared_cache.time.time", lambda: clock + 1)
    assert reused(key, 5, compute) == 2 and compute.calls == 2


UNREACHABLE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:9/0",
        "OPTIONS": {"socket_connect_timeout": 0.2},
    }
}


def test_without_redis_every_request_computes_its_own_answer():
    compute = Counter()
    with override_settings(CACHES=UNREACHABLE):
        assert [reused("test:any", 60, compute) for _ in range(2)] == [1, 2]
        assert [once_per_key("test:any", compute) for _ in range(2)] == [3, 4]


def test_what_a_key_names_is_built_once_and_read_by_the_others(services):
    key, build = f"test:{uuid.uuid4().hex}", Counter()
    assert [once_per_key(key, build) for _ in range(3)] == [1, 1, 1]
    assert build.calls == 1
    assert once_per_key(f"{key}:next", build) == 2  # another version: built again
