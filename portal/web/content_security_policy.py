"""The Content-Security-Policy header on every response: the pages load scripts, styles, images
and data only from the portal itself, run no inline script or style, and are never framed.

Django 5.2 has no CSP of its own. The demo and the tests send the same policy as production, so
the browser tests find any page that breaks it. A view that needs another policy (a caught mail
shown as it was sent) sets its own header, which is kept.
"""

from __future__ import annotations

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        # Swagger UI draws its icons from data: URLs.
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "object-src 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", POLICY)
        return response
