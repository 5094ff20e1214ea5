"""The analytics app's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.analytics.api import views

ROUTES = [("analytics", views.AnalyticsViewSet, "analytics")]
