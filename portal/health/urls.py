from __future__ import annotations

from django.urls import path

from portal.health import views

app_name = "health"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("health/services/", views.service_panel, name="service-panel"),
]
