from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "portal.alerts"
    label = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from portal.alerts.tasks import after_health_evaluation
        from portal.health.signals import evaluated

        evaluated.connect(after_health_evaluation, dispatch_uid="alerts.after_health_evaluation")
