from __future__ import annotations

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "portal.console"
    label = "console"
    verbose_name = "Management console"

    def ready(self) -> None:
        from portal.accounts.services import sign_in_refused
        from portal.console import jobs  # noqa: F401  (registers the console's job kinds)
        from portal.console.services import audit_refused_sign_in
        from portal.console.services.cluster import open_windows
        from portal.health.registry import register_maintenance

        sign_in_refused.connect(audit_refused_sign_in, dispatch_uid="console-audit-sign-in")
        # The health facts say which servers are in maintenance (and keep their moves quiet).
        register_maintenance(open_windows)
