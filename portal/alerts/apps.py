from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "portal.alerts"
    label = "alerts"
    verbose_name = "Alerts"
