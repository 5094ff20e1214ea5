"""Health of the rack as the engine last saw it, its history, and the thresholds it uses.

``HealthStatus`` caches one row per object (the colour the dashboard shows, with its reasons);
``StatusChange`` keeps one row per change of colour, for the history pages and for the alerting
that consumes them (``processed``). ``HealthSettings`` is a single row of thresholds that an
administrator edits in the portal; ``RetentionSettings`` one row that says how long the history
of changes and the logs of jobs are kept.
"""

from __future__ import annotations

import uuid
from dataclasses import fields

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from portal.health import rules
from portal.health.choices import NodeKind, Status
from portal.single_row.models import SingleRow

DEFAULTS = rules.Thresholds()
TEMPERATURE_KINDS = tuple(rules.TEMPERATURE_LABELS)  # cpu, inlet, exhaust, dimm, psu, other
TEMPERATURE_HELP = {
    "cpu": 'sensors named like "CPU1 Temp", "Processor", "Package"',
    "inlet": 'the air going in: "Inlet Temp", "Ambient Temp"',
    "exhaust": 'the air going out: "Exhaust Temp", "Outlet Temp"',
    "dimm": 'memory modules: "DIMM A1 Temp"',
    "psu": 'power supplies: "PS1 Temperature"',
    "other": "any other temperature sensor (chipset, board, ...)",
}


class HealthSettings(SingleRow):
    """The thresholds of the health rules; one row (pk=1), created with the defaults."""

    capacity_warning_percent = models.FloatField(
        "capacity warning (%)",
        default=DEFAULTS.capacity_warning_percent,
        help_text="an OST or the filesystem this full is orange",
    )
    capacity_critical_percent = models.FloatField(
        "capacity critical (%)",
        default=DEFAULTS.capacity_critical_percent,
        help_text="this full is red",
    )
    # temperature_<kind>_warning_c and _critical_c for each kind of sensor: added below.
    cpu_idle_warning_percent = models.FloatField(
        "CPU idle warning (%)",
        default=DEFAULTS.cpu_idle_warning_percent,
        help_text="CPU idle below this is orange",
    )
    cpu_idle_critical_percent = models.FloatField(
        "CPU idle critical (%)",
        default=DEFAULTS.cpu_idle_critical_percent,
        help_text="CPU idle below this is red",
    )
    memory_available_warning_percent = models.FloatField(
        "available memory warning (%)",
        default=DEFAULTS.memory_available_warning_percent,
        help_text="available memory below this share is orange",
    )
    memory_available_critical_percent = models.FloatField(
        "available memory critical (%)",
        default=DEFAULTS.memory_available_critical_percent,
        help_text="below this is red",
    )
    ost_fill_spread_warning_percent = models.FloatField(
        "OST fill spread warning (points)",
        default=DEFAULTS.ost_fill_spread_warning_percent,
        help_text="fullest minus emptiest OST, in points; Lustre's qos_threshold_rr is 17",
    )
    ost_fill_spread_critical_percent = models.FloatField(
        "OST fill spread critical (points)",
        default=DEFAULTS.ost_fill_spread_critical_percent,
        help_text="this spread is red",
    )
    sensor_silence_seconds = models.FloatField(
        "sensor silent after (s)",
        default=DEFAULTS.sensor_silence_seconds,
        help_text="a server whose sensor sent nothing for this long is red (3 intervals or more)",
    )
    updated = models.DateTimeField(auto_now=True)

    # (warning, critical, higher is worse)
    PAIRS = (
        ("capacity_warning_percent", "capacity_critical_percent", True),
        *(
            (f"temperature_{kind}_warning_c", f"temperature_{kind}_critical_c", True)
            for kind in TEMPERATURE_KINDS
        ),
        ("cpu_idle_warning_percent", "cpu_idle_critical_percent", False),
        ("memory_available_warning_percent", "memory_available_critical_percent", False),
        ("ost_fill_spread_warning_percent", "ost_fill_spread_critical_percent", True),
    )
    PERCENT_FIELDS = (
        "capacity_warning_percent",
        "capacity_critical_percent",
        "cpu_idle_warning_percent",
        "cpu_idle_critical_percent",
        "memory_available_warning_percent",
        "memory_available_critical_percent",
        "ost_fill_spread_warning_percent",
        "ost_fill_spread_critical_percent",
    )

    class Meta(SingleRow.Meta):
        verbose_name = "health settings"
        verbose_name_plural = "health settings"
        constraints = [
            *SingleRow.Meta.constraints,
            models.CheckConstraint(
                condition=models.Q(
                    capacity_warning_percent__lt=models.F("capacity_critical_percent")
                ),
                name="%(app_label)s_%(class)s_capacity_warning_below_critical",
            ),
            *(
                models.CheckConstraint(
                    condition=models.Q(
                        **{
                            f"temperature_{kind}_warning_c__lt": models.F(
                                f"temperature_{kind}_critical_c"
                            )
                        }
                    ),
                    name=f"%(app_label)s_%(class)s_{kind}_temperature_warning_below_critical",
                )
                for kind in TEMPERATURE_KINDS
            ),
            models.CheckConstraint(
                condition=models.Q(sensor_silence_seconds__gt=0),
                name="%(app_label)s_%(class)s_silence_positive",
            ),
        ]

    # The thresholds page shows the fields in these groups.
    GROUPS = (
        ("Capacity", ("capacity_warning_percent", "capacity_critical_percent")),
        (
            "Temperatures, where the BMC reports no thresholds of its own",
            tuple(
                f"temperature_{kind}_{level}_c"
                for kind in TEMPERATURE_KINDS
                for level in ("warning", "critical")
            ),
        ),
        (
            "CPU and memory",
            (
                "cpu_idle_warning_percent",
                "cpu_idle_critical_percent",
                "memory_available_warning_percent",
                "memory_available_critical_percent",
            ),
        ),
        ("OST balance", ("ost_fill_spread_warning_percent", "ost_fill_spread_critical_percent")),
        ("Sensors", ("sensor_silence_seconds",)),
    )

    def __str__(self) -> str:
        return "Health thresholds"

    def clean(self) -> None:
        errors = {}
        for name in self.PERCENT_FIELDS:
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 100:
                errors[name] = "give a percentage between 0 and 100"
        for warning, critical, higher_is_worse in self.PAIRS:
            low, high = getattr(self, warning), getattr(self, critical)
            if low is None or high is None or warning in errors or critical in errors:
                continue
            if higher_is_worse and not low < high:
                errors[warning] = "the warning level must be below the critical level"
            elif not higher_is_worse and not low > high:
                errors[warning] = "the warning level must be above the critical level"
        if self.sensor_silence_seconds is not None and self.sensor_silence_seconds <= 0:
            errors["sensor_silence_seconds"] = "give a positive number of seconds"
        if errors:
            raise ValidationError(errors)

    def thresholds(self) -> rules.Thresholds:
        return rules.Thresholds(
            **{f.name: float(getattr(self, f.name)) for f in fields(rules.Thresholds)}
        )


for _kind in TEMPERATURE_KINDS:
    HealthSettings.add_to_class(
        f"temperature_{_kind}_warning_c",
        models.FloatField(
            f"{rules.TEMPERATURE_LABELS[_kind]} warning (°C)",
            default=getattr(DEFAULTS, f"temperature_{_kind}_warning_c"),
            help_text=TEMPERATURE_HELP[_kind],
        ),
    )
    HealthSettings.add_to_class(
        f"temperature_{_kind}_critical_c",
        models.FloatField(
            f"{rules.TEMPERATURE_LABELS[_kind]} critical (°C)",
            default=getattr(DEFAULTS, f"temperature_{_kind}_critical_c"),
        ),
    )


class RetentionSettings(SingleRow):
    """How long the appliance keeps its history; one row (pk=1), created with the defaults."""

    history_days = models.PositiveIntegerField(
        "keep history (days)",
        default=90,
        validators=[
            MinValueValidator(1, "keep the history at least 1 day"),
            MaxValueValidator(3650, "keep the history at most 3650 days (ten years)"),
        ],
        help_text="changes of colour, and the logs and output of finished jobs, older than this "
        "are deleted every hour; the jobs themselves and each object's latest change are kept",
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta(SingleRow.Meta):
        verbose_name = "retention settings"
        verbose_name_plural = "retention settings"
        constraints = [
            *SingleRow.Meta.constraints,
            models.CheckConstraint(
                condition=models.Q(history_days__gte=1),
                name="%(app_label)s_%(class)s_history_at_least_a_day",
            ),
        ]

    def __str__(self) -> str:
        return f"History kept {self.history_days} days"


class HealthStatus(models.Model):
    """The colour of one object as last evaluated, and where it sits in the tree.

    Keyed to the inventory object (``key``, e.g. "target:12"), not to its name: a renamed
    object keeps its colour and history, and two objects of one name stay apart.
    """

    key = models.CharField(max_length=40, unique=True, help_text="the inventory object")
    kind = models.CharField(max_length=12, choices=NodeKind.choices)
    name = models.CharField(max_length=64)
    status = models.CharField(max_length=8, choices=Status.choices)
    reasons = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    parent_kind = models.CharField(max_length=12, choices=NodeKind.choices, blank=True)
    parent_name = models.CharField(max_length=64, blank=True)
    parent_key = models.CharField(max_length=40, blank=True)
    position = models.PositiveIntegerField(default=0, help_text="order among its siblings")
    since = models.DateTimeField(help_text="when it took this colour")

    class Meta:
        ordering = ["kind", "name"]
        verbose_name_plural = "health statuses"
        indexes = [models.Index(fields=["kind", "name"], name="health_status_kind_name")]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.status}"


def new_version() -> str:
    return uuid.uuid4().hex


class Evaluation(models.Model):
    """The latest evaluation of the whole rack (one row): when, how long, how much changed."""

    finished = models.DateTimeField()
    seconds = models.FloatField()
    objects_evaluated = models.PositiveIntegerField()
    changes = models.PositiveIntegerField()
    # A new value each time an evaluation writes a cached colour, reason or place: what the
    # pages' caches and ETags are keyed by (a steady rack keeps it, and its pages answer 304).
    version = models.CharField(max_length=32, default=new_version, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(pk=1), name="%(app_label)s_%(class)s_single_row"
            ),
        ]

    def __str__(self) -> str:
        return f"evaluated {self.objects_evaluated} objects at {self.finished:%H:%M:%S}"


class StatusChange(models.Model):
    """One change of colour; alerting consumes the rows (``processed``), health sends nothing."""

    key = models.CharField(max_length=40, blank=True, db_index=True, help_text="the object")
    kind = models.CharField(max_length=12, choices=NodeKind.choices)
    name = models.CharField(max_length=64)
    old = models.CharField(max_length=8, choices=Status.choices, blank=True)
    new = models.CharField(max_length=8, choices=Status.choices)
    reasons = models.JSONField(default=list, blank=True)
    summary = models.JSONField(
        default=dict, blank=True, help_text="the object's structured flags at the change"
    )
    at = models.DateTimeField(db_index=True)
    initial = models.BooleanField(
        default=False,
        help_text="the object's first colour in service (it was new or not in service yet), "
        "not a change of a colour it had",
    )
    processed = models.BooleanField(default=False, db_index=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["kind", "name", "-at"], name="health_change_object_at")]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.old or 'new'} → {self.new}"
