from __future__ import annotations

from django.urls import path

from portal.health import views

app_name = "health"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("health/services/", views.service_panel, name="service-panel"),
    path("health/overview/", views.overview_panel, name="overview-panel"),
    path("health/ssus/<slug:name>/", views.ssu_detail, name="ssu"),
    path("health/servers/<str:hostname>/", views.server_detail, name="server"),
    path("health/servers/<str:hostname>/clients/", views.server_clients, name="server-clients"),
    path("health/targets/<str:label>/", views.target_detail, name="target"),
    path("health/targets/<str:label>/clients/", views.target_clients, name="target-clients"),
    path("health/kernel-log/", views.kernel_log, name="kernel-log"),
    path("health/thresholds/", views.thresholds, name="thresholds"),
    path("health/retention/", views.retention, name="retention"),
    path("health/charts/<slug:chart>/", views.chart_data, name="chart"),
]
