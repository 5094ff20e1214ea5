from __future__ import annotations

from django.urls import path

from portal.jobs import views

app_name = "jobs"

urlpatterns = [
    path("", views.job_list, name="job-list"),
    path("<int:pk>/", views.job_detail, name="job-detail"),
    path("<int:pk>/progress/", views.job_progress, name="job-progress"),
    path("<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
    path("<int:pk>/retry/", views.job_retry, name="job-retry"),
]
