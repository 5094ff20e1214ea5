"""The portal's URLs: each app's pages, the API under /api/ with its schema and documentation, and
the unauthenticated /healthz."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.urls import include, path
from django.views import defaults
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from portal.health.views import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("accounts/", include("portal.accounts.urls")),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # A page for people: an anonymous visitor is sent to the login page, not given a 401.
    path(
        "api/docs/",
        login_required(
            require_safe(
                # Its script from a URL of its own, not inline: the Content-Security-Policy.
                SpectacularSwaggerSplitView.as_view(
                    url_name="api-schema", template_name="portal/swagger_ui.html"
                )
            )
        ),
        name="api-docs",
    ),
    path("api/v1/", include("portal.api_router")),
    path("ssus/add/", include("portal.wizard.urls")),
    path("ssus/", include("portal.inventory.urls")),
    path("jobs/", include("portal.jobs.urls")),
    path("alerts/", include("portal.alerts.urls")),
    path("analytics/", include("portal.analytics.urls")),
    path("usage/", include("portal.usage.urls")),
    path("surveys/", include("portal.surveys.urls")),
    path("console/", include("portal.console.urls")),
    path("", include("portal.health.urls")),
]


def not_found(request, exception):
    """An API client gets JSON, as from every API view, for a URL no route matches."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


handler404 = not_found
