"""The names the site gives to user and group ids (the rest is in InfluxDB)."""

from __future__ import annotations

from django.db import models

from portal.usage.choices import NamedKind, NameSource


class OwnerName(models.Model):
    """One id's name, from an uploaded ``getent passwd``/``getent group`` output or from the
    management server's own NSS. An id without a row is shown as its number."""

    kind = models.CharField(max_length=5, choices=NamedKind.choices)
    number = models.PositiveBigIntegerField("id")
    name = models.CharField(max_length=256)
    source = models.CharField(max_length=6, choices=NameSource.choices)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "number"], name="%(app_label)s_%(class)s_unique_id_per_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.number}: {self.name}"
