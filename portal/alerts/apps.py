from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "portal.alerts"
    label = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from portal.alerts.services.relay import check_mail
        from portal.alerts.tasks import after_health_evaluation
        from portal.health.registry import register_service_check
        from portal.health.signals import evaluated

        evaluated.connect(after_health_evaluation, dispatch_uid="alerts.after_health_evaluation")
        # The mail relay's tile on the dashboard and its line of /healthz.
        register_service_check(check_mail)
