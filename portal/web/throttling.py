"""Requests per user, for the API (DRF's throttling) and the pages alike: no one user, or a
script with their credentials, takes the portal's few gunicorn workers from everyone else.

Signed-in users are counted per user, pages and API together; anonymous API clients per address
(the address nginx saw, as the sign-in limit counts it; the login page has its own limit). Past
the rate the answer is 429 with Retry-After. The counts live in Redis (Django's cache), shared
by the processes; while Redis does not answer nothing is refused. The rates are read from the
settings when a request is counted (DRF's own classes read them once, at import), so a test can
change them.
"""

from __future__ import annotations

import logging
import math
import time

import redis
from django.conf import settings
from django.http import HttpResponse
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from portal.accounts.services import client_address

log = logging.getLogger(__name__)
# After Redis failed to answer, requests are not counted for this long (seconds): a hung Redis
# must not cost every request its socket timeout.
REDIS_PAUSE_SECONDS = 10
_redis_down_until = 0.0


class _Counted:
    setting = ""

    def get_rate(self) -> str | None:
        return getattr(settings, self.setting)

    def get_ident(self, request) -> str:
        return client_address(request) or request.META.get("REMOTE_ADDR", "")

    def allow_request(self, request, view) -> bool:
        global _redis_down_until
        if time.monotonic() < _redis_down_until:
            return True
        try:
            return super().allow_request(request, view)
        except redis.RedisError as error:
            log.warning("requests not counted for %s s: no Redis (%s)", REDIS_PAUSE_SECONDS, error)
            _redis_down_until = time.monotonic() + REDIS_PAUSE_SECONDS
            return True


class UserRate(_Counted, UserRateThrottle):
    """A signed-in user's requests (``OSTARA_THROTTLE_USER_RATE``)."""

    setting = "OSTARA_THROTTLE_USER_RATE"


class AnonymousRate(_Counted, AnonRateThrottle):
    """An anonymous client's API requests, per address (``OSTARA_THROTTLE_ANON_RATE``)."""

    setting = "OSTARA_THROTTLE_ANON_RATE"


class PageThrottleMiddleware:
    """The user's rate on the pages (the API counts itself, through DRF)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated and not request.path.startswith("/api/"):
            throttle = UserRate()
            if not throttle.allow_request(request, None):
                wait = max(1, math.ceil(throttle.wait() or 1))
                response = HttpResponse(
                    f"Too many requests: ask again in {wait} s.",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(wait)
                return response
        return self.get_response(request)
