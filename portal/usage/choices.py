"""Enumerations of the usage app and the windows its page offers."""

from __future__ import annotations

from django.db import models

from sensors import schema

# A growth is measured over a window ending now; any other range is given as since/until.
WINDOWS = {"24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400}
DEFAULT_WINDOW = "7d"
# How far back the newest limits and per-OST figures are looked for before the window's end
# (the sensors send them every usage interval: 60 s).
NEWEST_SECONDS = 3600
# The growth the alert rules forecast from, and how long their reading serves the rounds.
ALERT_WINDOW_SECONDS = 86400
ALERT_REUSE_SECONDS = 60


class OwnerKind(models.TextChoices):
    USER = schema.OWNER_KINDS[0], "User"
    GROUP = schema.OWNER_KINDS[1], "Group"
    PROJECT = schema.OWNER_KINDS[2], "Project"


class NamedKind(models.TextChoices):
    """The owners with names: users and groups (projects have no NSS map: numbers)."""

    USER = OwnerKind.USER.value, "User"
    GROUP = OwnerKind.GROUP.value, "Group"


class NameSource(models.TextChoices):
    UPLOAD = "upload", "Uploaded getent output"
    NSS = "nss", "This server's NSS"


# The getent database of each named kind.
GETENT_DATABASES = {NamedKind.USER: "passwd", NamedKind.GROUP: "group"}
