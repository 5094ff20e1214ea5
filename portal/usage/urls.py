from __future__ import annotations

from django.urls import path

from portal.usage import views

app_name = "usage"

urlpatterns = [
    path("", views.index, name="index"),
    path("names/", views.owner_names, name="names"),
]
