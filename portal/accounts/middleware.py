"""Login on every page and API endpoint, except the few views marked ``login_not_required``."""

from __future__ import annotations

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import JsonResponse


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
