from __future__ import annotations

from django.urls import path

from portal.alerts import views

app_name = "alerts"

urlpatterns = [
    path("", views.active, name="active"),
    path("panel/", views.panel, name="panel"),
    path("events/<int:pk>/", views.event_detail, name="event"),
    path("events/<int:pk>/acknowledge/", views.acknowledge_event, name="acknowledge"),
    path("incidents/<int:pk>/", views.incident_detail, name="incident"),
    path(
        "incidents/<int:pk>/acknowledge/",
        views.acknowledge_incident,
        name="incident-acknowledge",
    ),
    path("rules/", views.rules, name="rules"),
    path("rules/new/", views.rule_edit, name="rule-new"),
    path("rules/<int:pk>/", views.rule_edit, name="rule"),
    path("rules/<int:pk>/delete/", views.rule_delete, name="rule-delete"),
    path("silences/", views.silences, name="silences"),
    path("silences/<int:pk>/end/", views.silence_end, name="silence-end"),
    path("history/", views.history, name="history"),
    path("settings/mail/", views.mail_settings, name="mail"),
    path("settings/mail/relay/", views.mail_relay, name="mail-relay"),
    path("settings/mail/caught/<str:key>/", views.caught_message, name="caught-message"),
    path(
        "settings/mail/caught/<str:key>/html/",
        views.caught_message_html,
        name="caught-message-html",
    ),
]
