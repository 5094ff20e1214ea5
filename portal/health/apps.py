from __future__ import annotations

from django.apps import AppConfig


class HealthConfig(AppConfig):
    name = "portal.health"
    label = "health"
    verbose_name = "Health"
