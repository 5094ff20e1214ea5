"""One DRF router for the whole API; each app lists its viewsets in ``api/urls.py`` ROUTES."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from portal.alerts.api.urls import ROUTES as ALERT_ROUTES
from portal.analytics.api.urls import ROUTES as ANALYTICS_ROUTES
from portal.console.api.urls import ROUTES as CONSOLE_ROUTES
from portal.health.api.urls import ROUTES as HEALTH_ROUTES
from portal.inventory.api.urls import ROUTES as INVENTORY_ROUTES
from portal.jobs.api.urls import ROUTES as JOB_ROUTES
from portal.surveys.api.urls import ROUTES as SURVEY_ROUTES
from portal.usage.api.urls import ROUTES as USAGE_ROUTES

router = DefaultRouter()
# No `.json` suffix routes: the actions do not take the `format` they would pass (a 500), and
# `?format=json` or the Accept header choose the format.
router.include_format_suffixes = False
# (prefix, viewset) or (prefix, viewset, basename) for viewsets without a queryset.
for prefix, viewset, *basename in (
    INVENTORY_ROUTES
    + JOB_ROUTES
    + HEALTH_ROUTES
    + ALERT_ROUTES
    + ANALYTICS_ROUTES
    + USAGE_ROUTES
    + SURVEY_ROUTES
    + CONSOLE_ROUTES
):
    router.register(prefix, viewset, *basename)

urlpatterns = router.urls
