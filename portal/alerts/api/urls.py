"""The alerts app's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.alerts.api import views

ROUTES = [
    ("alert-rules", views.RuleViewSet),
    ("alert-incidents", views.IncidentViewSet),
    ("alert-events", views.EventViewSet),
    ("alert-silences", views.SilenceViewSet),
]
