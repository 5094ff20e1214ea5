"""The analytics settings: where imbalance and small I/O begin (DESIGN.md §9)."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from portal.analytics import maths
from portal.single_row.models import SingleRow


class AnalyticsSettings(SingleRow):
    """One row (pk=1), created with the defaults."""

    overload_margin_percent = models.FloatField(
        "overload margin (%)",
        default=maths.DEFAULT_OVERLOAD_MARGIN * 100,
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="an OSS whose share of the bytes exceeds the mean share by this much is "
        "overloaded",
    )
    fill_spread_points = models.FloatField(
        "OST fill spread (points)",
        default=maths.QOS_THRESHOLD_RR_POINTS,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="flag the OST fill levels when the fullest and the emptiest differ by more "
        "(Lustre's qos_threshold_rr: 17)",
    )
    small_io_kib = models.PositiveIntegerField(
        "small I/O (KiB)",
        default=maths.DEFAULT_SMALL_IO_BYTES // 1024,
        validators=[MinValueValidator(1), MaxValueValidator(16384)],
        help_text="I/Os below this size count as small",
    )
    striping_min_gib = models.FloatField(
        "striping: least data (GiB)",
        default=maths.STRIPING_MIN_BYTES / 2**30,
        validators=[MinValueValidator(0.001)],
        help_text="a job that moved less in the window is never flagged",
    )
    striping_gib_per_stripe = models.FloatField(
        "striping: data per stripe (GiB)",
        default=maths.STRIPING_BYTES_PER_STRIPE / 2**30,
        validators=[MinValueValidator(0.001)],
        help_text="one stripe is warranted per this much data a job moved",
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta(SingleRow.Meta):
        verbose_name_plural = "analytics settings"

    @property
    def margin(self) -> float:
        return self.overload_margin_percent / 100

    @property
    def small_io_bytes(self) -> int:
        return self.small_io_kib * 1024
