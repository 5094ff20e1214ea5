"""Settings kept in one row (pk=1) that an administrator edits in the portal: the health
thresholds, the analytics limits, the retention of history. Their page is
``portal.single_row.page.single_row_settings``."""

from __future__ import annotations

from typing import Self

from django.db import models


class SingleRow(models.Model):
    """The one row of a model (pk=1), created with the fields' defaults when first loaded."""

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=models.Q(pk=1), name="%(app_label)s_%(class)s_single_row"
            ),
        ]

    def save(self, *args, **kwargs):
        self.pk = 1
        super().save(*args, **kwargs)

    @classmethod
    def load(cls) -> Self:
        row, _ = cls.objects.get_or_create(pk=1)
        return row
