from __future__ import annotations

from django.urls import path

from portal.analytics import views

app_name = "analytics"

urlpatterns = [
    path("", views.index, name="index"),
    path("cell/", views.cell, name="cell"),
    path("settings/", views.analytics_settings, name="settings"),
    path("<slug:name>/", views.view, name="view"),
]
