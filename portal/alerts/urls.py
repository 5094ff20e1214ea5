from __future__ import annotations

from django.urls import path

from portal.alerts import views

app_name = "alerts"

urlpatterns = [
    path("alerts/", views.active, name="active"),
    path("alerts/panel/", views.panel, name="panel"),
    path("alerts/events/<int:pk>/", views.event_detail, name="event"),
    path("alerts/events/<int:pk>/acknowledge/", views.acknowledge_event, name="acknowledge"),
    path("alerts/rules/", views.rules, name="rules"),
    path("alerts/rules/new/", views.rule_edit, name="rule-new"),
    path("alerts/rules/<int:pk>/", views.rule_edit, name="rule"),
    path("alerts/rules/<int:pk>/delete/", views.rule_delete, name="rule-delete"),
    path("alerts/silences/", views.silences, name="silences"),
    path("alerts/silences/<int:pk>/end/", views.silence_end, name="silence-end"),
    path("alerts/history/", views.history, name="history"),
    path("settings/mail/", views.mail_settings, name="mail"),
    path("settings/mail/caught/<str:key>/", views.caught_message, name="caught-message"),
]
