from __future__ import annotations

from django.urls import path

from portal.wizard import views

app_name = "wizard"

urlpatterns = [
    path("", views.start, name="start"),
    path("filesystem/", views.filesystem_step, name="filesystem"),
    path("servers/", views.servers_step, name="servers"),
    path("arrays/", views.arrays_step, name="arrays"),
    path("review/", views.review_step, name="review"),
    path("spec/<str:role>.json", views.download_spec, name="download-spec"),
    path("upload/", views.upload_spec, name="upload-spec"),
    path("reset/", views.reset, name="reset"),
]
