"""``Cache-Control`` on what a signed-in user is shown and on every API answer: ``no-store``, so
no browser or proxy keeps a copy of a page behind the login (a shared console's disk cache, the
back button after signing out).

An answer with an ETag (the dashboard's refresh, ``/api/v1/health/``) is ``private, no-cache``
instead: the browser keeps it for this user only and asks again every time, sending the ETag,
so a wall display's refresh of an unchanged rack is a 304. Static files (served before this
middleware by WhiteNoise), ``/healthz`` and the login page for someone not signed in are left
as they were; a view that sets its own ``Cache-Control`` keeps it.
"""

from __future__ import annotations

NOT_STORED = "no-store"
REVALIDATED = "private, no-cache"


class CacheControlMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.has_header("Cache-Control"):
            return response
        user = getattr(request, "user", None)
        if request.path.startswith("/api/") or (user is not None and user.is_authenticated):
            response["Cache-Control"] = REVALIDATED if response.has_header("ETag") else NOT_STORED
        return response
