"""What the portal remembers per user beyond Django's own user: the guided tour's state and
whether alert warnings are mailed to them; and recent failed sign-ins, for the rate limit."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


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


class LoginFailure(models.Model):
    """A sign-in that failed (portal, admin or the API's Basic auth), kept for the rate limit
    of its address while it is recent; deleting it lifts the limit. In the database, so every
    portal process counts the same failures and a Redis outage neither locks everybody out nor
    lifts the limit."""

    username = models.CharField(max_length=150)
    address = models.GenericIPAddressField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["username", "created"], name="accounts_loginfailure_user"),
            models.Index(fields=["address", "created"], name="accounts_loginfailure_address"),
        ]

    def __str__(self) -> str:
        return f"failed sign-in as {self.username} from {self.address} at {self.created}"
