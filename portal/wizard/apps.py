from __future__ import annotations

from django.apps import AppConfig


class WizardConfig(AppConfig):
    name = "portal.wizard"
    label = "wizard"
    verbose_name = "Add an SSU"
