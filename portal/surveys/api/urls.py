"""The surveys app's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.surveys.api import views

ROUTES = [("surveys", views.SurveyViewSet)]
