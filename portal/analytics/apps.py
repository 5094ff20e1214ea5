from __future__ import annotations

from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "portal.analytics"
    label = "analytics"
    verbose_name = "Analytics"
