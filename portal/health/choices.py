"""Enumerations of the health app; each status has one colour, named after it."""

from __future__ import annotations

from django.db import models

from portal.health import rules


class Status(models.TextChoices):
    GREY = rules.GREY, "Not in service"
    GREEN = rules.GREEN, "Green"
    ORANGE = rules.ORANGE, "Orange"
    RED = rules.RED, "Red"


class NodeKind(models.TextChoices):
    FILESYSTEM = "filesystem", "Filesystem"
    SSU = "ssu", "SSU"
    PAIR = "pair", "Server pair"
    SERVER = "server", "Server"
    ARRAY = "array", "Storage array"
    TARGET = "target", "Target"


# Time ranges of the charts: label -> seconds.
CHART_RANGES = {
    "15m": 15 * 60,
    "1h": 3600,
    "6h": 6 * 3600,
    "24h": 24 * 3600,
    "7d": 7 * 86400,
    "30d": 30 * 86400,
    "90d": 90 * 86400,
    "1y": 365 * 86400,
}
