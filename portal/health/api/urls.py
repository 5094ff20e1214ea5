"""The health app's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.health.api import views

ROUTES = [
    ("health", views.HealthTreeViewSet, "health"),
    ("health-changes", views.StatusChangeViewSet),
    ("kernel-log", views.KernelLogViewSet, "kernel-log"),
]
