from __future__ import annotations

from django.urls import path

from portal.surveys import views

app_name = "surveys"

urlpatterns = [
    path("", views.survey_list, name="list"),
    path("compare/", views.survey_compare, name="compare"),
    path("<int:pk>/", views.survey_detail, name="detail"),
    path("<int:pk>/live/", views.survey_live, name="live"),
    path("ssu/<slug:name>/", views.ssu_history, name="history"),
    path("ssu/<slug:name>/new/", views.survey_new, name="new"),
]
