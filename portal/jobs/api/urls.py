from __future__ import annotations

from portal.jobs.api import views

ROUTES = [("jobs", views.JobViewSet)]
