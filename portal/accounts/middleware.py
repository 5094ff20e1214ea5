"""Login on every page and API endpoint, except the few views marked ``login_not_required``;
sessions that end after a working day, or sooner when left idle."""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpResponse, JsonResponse
from django.shortcuts import resolve_url

# Seconds since the epoch, kept in the session: when it signed in, when its user last asked for
# a page.
SIGNED_IN_KEY = "ostara_signed_in"
SEEN_KEY = "ostara_seen"


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's middleware, but API clients get a 401 in JSON instead of a login page."""

    def handle_no_permission(self, request, view_func):
        if request.path.startswith("/api/"):
            response = JsonResponse(
                {"detail": "Authentication credentials were not provided."}, status=401
            )
            response["WWW-Authenticate"] = 'Basic realm="ostara"'
            return response
        return super().handle_no_permission(request, view_func)


class SessionExpiryMiddleware:
    """A signed-in session ends SESSION_COOKIE_AGE after sign-in whatever happens, and after
    SESSION_IDLE_SECONDS without a page the person asked for (htmx's own refreshes of an open
    dashboard do not count). The next request then meets the login page (401 on the API)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated and self._expired(request):
            logout(request)
            messages.info(request, "Your session expired: sign in again.")
            if request.headers.get("HX-Request"):
                # A panel refreshing itself: send the whole page to the login page.
                response = HttpResponse(status=204)
                response["HX-Redirect"] = f"{resolve_url(settings.LOGIN_URL)}?next=/"
                return response
        return self.get_response(request)

    @staticmethod
    def _expired(request) -> bool:
        now = int(time.time())
        session = request.session
        signed_in = session.setdefault(SIGNED_IN_KEY, now)
        seen = session.get(SEEN_KEY, signed_in)
        idle = settings.SESSION_IDLE_SECONDS
        if now - signed_in > settings.SESSION_COOKIE_AGE or (idle and now - seen > idle):
            return True
        # Written at most once a minute: a session save is a database write.
        if not request.headers.get("HX-Request") and now - seen >= 60:
            session[SEEN_KEY] = now
        return False
