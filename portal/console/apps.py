from __future__ import annotations

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "portal.console"
    label = "console"
    verbose_name = "Management console"

    def ready(self) -> None:
        from portal.console import jobs  # noqa: F401  (registers the console's job kinds)
