"""The console app's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.console.api import views

ROUTES = [
    ("console", views.ConsoleViewSet, "console"),
    ("audit", views.AuditEntryViewSet),
]
