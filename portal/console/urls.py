from __future__ import annotations

from django.urls import path

from portal.console import views

app_name = "console"
urlpatterns = [
    path("servers/<str:hostname>/<slug:act>/", views.server_act, name="server-act"),
    path("targets/<str:label>/<slug:act>/", views.target_act, name="target-act"),
    path("arrays/<slug:name>/", views.array_detail, name="array"),
    path("arrays/<slug:name>/drives/<str:address>/", views.drive_replace, name="drive"),
    path("parameters/", views.parameters, name="parameters"),
    path("audit/", views.audit_log, name="audit"),
    path("audit/<int:pk>/revert/", views.audit_revert, name="revert"),
]
