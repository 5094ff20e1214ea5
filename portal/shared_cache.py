"""Answers the portal's processes share for a few seconds, in Redis (Django's cache).

Twenty dashboards open on one filesystem ask for the same chart every refresh; ``reused`` lets
one process compute it once per period and the others answer with it. When the period is over,
the first process to ask recomputes while the rest answer with the previous data, so the
answers never wait on each other. Without Redis every request computes its own answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

import redis
from django.core.cache import cache

log = logging.getLogger(__name__)
T = TypeVar("T")
# How long a process may hold the recomputation before another one takes it over.
RECOMPUTE_SECONDS = 60


def reused(key: str, seconds: float, compute: Callable[[], T]) -> T:
    """``compute()``'s answer, computed at most once per ``seconds`` across the processes."""
    if seconds <= 0:
        return compute()
    try:
        kept = cache.get(key)
        if kept is not None:
            answer, computed = kept
            if time.time() - computed < seconds:
                return answer
            if not cache.add(f"{key}:recomputing", 1, timeout=RECOMPUTE_SECONDS):
                return answer  # another process is on it: the previous answer meanwhile
    except redis.RedisError as error:
        log.warning("no shared cache (%s): computing %s here", error, key)
        return compute()
    answer = compute()
    try:
        cache.set(key, (answer, time.time()), timeout=max(60, 10 * seconds))
        cache.delete(f"{key}:recomputing")
    except redis.RedisError as error:
        log.warning("no shared cache (%s): %s not kept", error, key)
    return answer
