"""The usage app's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.usage.api import views

ROUTES = [("usage", views.UsageViewSet, "usage")]
