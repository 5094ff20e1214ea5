"""Enumerations of the alerts app; each status has one colour for its badge."""

from __future__ import annotations

from django.db import models

from portal.alerts import conditions


class Severity(models.TextChoices):
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


class EventStatus(models.TextChoices):
    # The condition holds, not yet for the rule's duration: kept for its timing, never mailed.
    PENDING = "pending", "Pending"
    FIRING = "firing", "Firing"
    RESOLVED = "resolved", "Resolved"


class TransitionKind(models.TextChoices):
    """What happened to an event; the first three are mailed (``portal.alerts.engine``)."""

    FIRING = "firing", "Firing"
    REMINDER = "reminder", "Reminder"
    RESOLVED = "resolved", "Resolved"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Waiting to be sent"
    SENDING = "sending", "Being sent"
    SENT = "sent", "Sent"
    # Refused by the mail server (5xx), or a mail that cannot be written: never tried again.
    FAILED = "failed", "Failed for good"
    SILENCED = "silenced", "Silenced"
    FOLDED = "folded", "Told in the mail about its server"


class ConditionKind(models.TextChoices):
    HEALTH = "health", "A health state"
    THRESHOLD = "threshold", "A metric threshold"
    NO_DATA = "no_data", "No data"


class HealthCondition(models.TextChoices):
    """What of an object's health fires a rule (``portal.alerts.conditions``)."""

    RED = conditions.RED, "turns red"
    ORANGE = conditions.ORANGE, "turns orange or worse"
    ON_PARTNER = conditions.ON_PARTNER, "a target runs on its failover partner"
    SILENT = conditions.SILENT, "its sensor has gone silent"
    VOLUME_GROUP = conditions.VOLUME_GROUP, "its volume group is degraded, critical or failed"
    FULL = conditions.FULL, "an OST is fuller than the capacity threshold"
    HOT = conditions.HOT, "a temperature is above its threshold"


class Comparison(models.TextChoices):
    GT = ">", ">"
    GE = ">=", "≥"
    LT = "<", "<"
    LE = "<=", "≤"


class ScopeKind(models.TextChoices):
    ALL = "all", "Every object"
    FILESYSTEM = "filesystem", "One filesystem"
    SSU = "ssu", "One SSU"
    KIND = "kind", "One kind of object"
