"""What the portal remembers per user beyond Django's own user: the guided tour's state and
whether alert warnings are mailed to them."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Preferences(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    tour_dismissed = models.DateTimeField(
        null=True, blank=True, help_text="when the user closed the dashboard's guided tour"
    )
    alert_warnings = models.BooleanField(
        "mail me warnings",
        default=True,
        help_text="off: only critical alerts of the rules I receive are mailed to me",
    )

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self) -> str:
        return f"preferences of {self.user}"
