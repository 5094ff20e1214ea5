from __future__ import annotations

from django.urls import path

from portal.alerts import views

app_name = "alerts"

urlpatterns = [
    path("settings/mail/", views.mail_settings, name="mail"),
    path("settings/mail/caught/<str:key>/", views.caught_message, name="caught-message"),
]
