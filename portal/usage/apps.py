from __future__ import annotations

from django.apps import AppConfig


class UsageConfig(AppConfig):
    name = "portal.usage"
    label = "usage"
    verbose_name = "Usage by owner"
