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


class GroupStatus(models.TextChoices):
    """An incident group (``portal.alerts.grouping``): waiting out its group wait, mailed, over."""

    PENDING = "pending", "Waiting"
    FIRING = "firing", "Firing"
    RESOLVED = "resolved", "Resolved"


class GroupMailKind(models.TextChoices):
    """The mails of an incident group, one per address each (``portal.alerts.grouping``)."""

    FIRING = "firing", "Firing"
    UPDATE = "update", "More alerts"
    REMINDER = "reminder", "Reminder"
    RESOLVED = "resolved", "Resolved"


class GroupBy(models.TextChoices):
    """Which alerts of a rule share one incident group, and so one mail."""

    AUTO = "auto", "Its SSU or server pair (the filesystem for filesystem-wide alerts)"
    PAIR = "pair", "Its SSU or server pair, never the whole filesystem"
    ARRAY = "array", "Its storage array (a target's: the array of its volume group)"
    FILESYSTEM = "filesystem", "Its filesystem"
    OBJECT = "object", "No grouping: one incident per object"


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
    # An owner's usage (portal.usage): the threshold is the percent of a hard limit, or the
    # days within which its growth would reach one.
    QUOTA = "quota", "An owner above N % of their limit"
    QUOTA_DAYS = "quota_days", "An owner's growth reaches their limit within D days"


class HealthCondition(models.TextChoices):
    """What of an object's health fires a rule (``portal.alerts.conditions``)."""

    RED = conditions.RED, "turns red"
    ORANGE = conditions.ORANGE, "turns orange or worse"
    ON_PARTNER = conditions.ON_PARTNER, "a target runs on its failover partner"
    SILENT = conditions.SILENT, "its sensor has gone silent"
    VOLUME_GROUP = conditions.VOLUME_GROUP, "its volume group is degraded, critical or failed"
    FULL = conditions.FULL, "an OST is fuller than the capacity threshold"
    HOT = conditions.HOT, "a temperature is above its threshold"
    REDUNDANCY = conditions.REDUNDANCY, "it lost a redundant part"


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
