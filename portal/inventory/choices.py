"""Enumerations of the inventory; each status has one badge colour."""

from __future__ import annotations

from django.db import models


class ServerRole(models.TextChoices):
    MGS = "mgs", "MGS"
    MDS = "mds", "MDS"
    OSS = "oss", "OSS"


class PairKind(models.TextChoices):
    MDS = "mds", "MDS pair"
    OSS = "oss", "OSS pair"


class EnclosureKind(models.TextChoices):
    CONTROLLER = "controller", "Controller enclosure"
    EXPANSION = "expansion", "Expansion enclosure"


class DriveState(models.TextChoices):
    BLANK = "blank", "Blank"
    ASSIGNED = "assigned", "Assigned"
    OPTIMAL = "optimal", "Optimal"
    SPARE = "spare", "Hot spare"
    FAILED = "failed", "Failed"
    REBUILDING = "rebuilding", "Rebuilding"


class VolumeGroupState(models.TextChoices):
    PLANNED = "planned", "Planned"
    OPTIMAL = "optimal", "Optimal"
    DEGRADED = "degraded", "Degraded"
    CRITICAL = "critical", "Critical"
    FAILED = "failed", "Failed"


class TargetKind(models.TextChoices):
    MGT = "MGT", "MGT"
    MDT = "MDT", "MDT"
    OST = "OST", "OST"


class TargetState(models.TextChoices):
    PLANNED = "planned", "Planned"
    FORMATTED = "formatted", "Formatted"
    REGISTERED = "registered", "Registered"
    MOUNTED = "mounted", "Mounted"
    FAILED_OVER = "failed_over", "Failed over"
    OFFLINE = "offline", "Offline"
