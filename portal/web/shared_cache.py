"""Answers the portal's processes share for a few seconds, in Redis (Django's cache).

Twenty dashboards open on one filesystem ask for the same chart every refresh; ``reused`` lets
one process compute it once per period and the others answer with it. When the period is over,
the first request to ask starts the recomputation in a thread of its process and, like every
other request until it is done, answers with the previous data: only the very first request of
a chart waits for it. Without Redis every request computes its own answer.

``once_per_key`` shares what does not go stale because its key names what it is made of (the
dashboard's trees, tiles and latest changes of one version of the cached colours): the first
process to need it builds it, the others read it. Processes that miss it at the same moment
each build it. The key does not name the code: after an upgrade, what the old code kept is
read for up to ``KEY_KEPT_SECONDS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import redis
from django.core.cache import cache

log = logging.getLogger(__name__)
T = TypeVar("T")
# How long a process may hold the recomputation before another one takes it over.
RECOMPUTE_SECONDS = 60
# How long ``once_per_key`` keeps an answer: a version of the colours is asked for while it is
# the newest, then never again (a 100-SSU rack's trees and tiles are about 1.2 MB a version,
# and a rack changing colour every round makes a version every 10 s).
KEY_KEPT_SECONDS = 120


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
            if cache.add(f"{key}:recomputing", 1, timeout=RECOMPUTE_SECONDS):
                threading.Thread(
                    target=_recompute, args=(key, seconds, compute), daemon=True
                ).start()
            return answer  # the previous answer while it is recomputed
    except redis.RedisError as error:
        log.warning("no shared cache (%s): computing %s here", error, key)
        return compute()
    answer = compute()
    _keep(key, seconds, answer)
    return answer


def _recompute(key: str, seconds: float, compute: Callable[[], object]) -> None:
    try:
        _keep(key, seconds, compute())
    except Exception:  # a thread's error goes to the log; the old answer stays
        log.exception("recomputing %s failed; the previous answer stays", key)
        try:
            cache.delete(f"{key}:recomputing")
        except redis.RedisError:
            pass


def _keep(key: str, seconds: float, answer: object) -> None:
    try:
        cache.set(key, (answer, time.time()), timeout=max(60, 10 * seconds))
        cache.delete(f"{key}:recomputing")
    except redis.RedisError as error:
        log.warning("no shared cache (%s): %s not kept", error, key)


def once_per_key(key: str, build: Callable[[], T]) -> T:
    """``build()``'s answer, built once across the processes while Redis keeps it (``key`` must
    name everything the answer is made of)."""
    try:
        kept = cache.get(key)
    except redis.RedisError as error:
        log.warning("no shared cache (%s): building %s here", error, key)
        return build()
    if kept is not None:
        return kept
    answer = build()
    try:
        cache.set(key, answer, timeout=KEY_KEPT_SECONDS)
    except redis.RedisError as error:
        log.warning("no shared cache (%s): %s not kept", error, key)
    return answer
