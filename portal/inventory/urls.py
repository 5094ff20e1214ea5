from __future__ import annotations

from django.urls import path

from portal.inventory import views

app_name = "inventory"

urlpatterns = [
    path("", views.ssu_list, name="ssu-list"),
    path("<slug:name>/", views.ssu_detail, name="ssu-detail"),
]
