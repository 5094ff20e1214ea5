from __future__ import annotations

from django.apps import AppConfig


class SurveysConfig(AppConfig):
    name = "portal.surveys"
    label = "surveys"
    verbose_name = "Surveys"

    def ready(self) -> None:
        from portal.surveys import jobs  # noqa: F401  (registers the survey job kind)
