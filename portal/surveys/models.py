"""obdfilter-survey runs of an SSU and every line they printed.

A ``Survey`` is what was asked (which servers and OSTs, the script's parameters) and what was
concluded (verdict, reasons, the measured and expected figures). Its ``SurveyResult`` rows are
the result lines, one per test: per server as the script printed them, for the whole survey
(``server`` empty: the servers' lines of the same combination added up), and for each OST
surveyed alone (``target`` set).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from portal.surveys.choices import Scope, Verdict


class Survey(models.Model):
    pair = models.ForeignKey(
        "inventory.ServerPair", on_delete=models.PROTECT, related_name="surveys"
    )
    job = models.ForeignKey(
        "jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="surveys"
    )
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.SSU)
    # hostname -> labels of the OSTs driven on it
    targets = models.JSONField(default=dict)
    size_mb = models.PositiveIntegerField(help_text="MB written and read per OST and test")
    rsz_lo_kib = models.PositiveIntegerField()
    rsz_hi_kib = models.PositiveIntegerField()
    obj_lo = models.PositiveIntegerField()
    obj_hi = models.PositiveIntegerField()
    thr_lo = models.PositiveIntegerField()
    thr_hi = models.PositiveIntegerField()
    tests = models.JSONField(default=list)
    per_target = models.BooleanField(default=True, help_text="also survey each OST alone")
    tolerance = models.FloatField(default=0.9)
    acceptance = models.BooleanField(default=False, help_text="run by a provisioning job")
    warnings = models.JSONField(default=list, blank=True, help_text="confirmed at the start")
    verdict = models.CharField(max_length=8, choices=Verdict.choices, default=Verdict.PENDING)
    reasons = models.JSONField(default=list, blank=True)
    expected_mb_s = models.FloatField(null=True, blank=True)
    measured_mb_s = models.JSONField(default=dict, blank=True)
    # What the script printed, per server and per OST alone (for the record and for re-parsing).
    output = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="surveys",
    )
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"survey #{self.pk} of {self.pair_id}"

    @property
    def servers(self) -> list[str]:
        return sorted(self.targets)

    @property
    def labels(self) -> list[str]:
        return sorted(label for labels in self.targets.values() for label in labels)

    @property
    def parameters(self) -> dict:
        return {
            "size_mb": self.size_mb,
            "rsz_lo_kib": self.rsz_lo_kib,
            "rsz_hi_kib": self.rsz_hi_kib,
            "obj_lo": self.obj_lo,
            "obj_hi": self.obj_hi,
            "thr_lo": self.thr_lo,
            "thr_hi": self.thr_hi,
            "tests": self.tests,
        }


class SurveyResult(models.Model):
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="results")
    server = models.CharField(max_length=253, blank=True, help_text="empty: all servers added")
    target = models.CharField(max_length=32, blank=True, help_text="set: that OST alone")
    line = models.PositiveIntegerField(help_text="line of the printed output")
    ost = models.PositiveIntegerField()
    sz_kib = models.BigIntegerField()
    rsz_kib = models.PositiveIntegerField()
    obj = models.PositiveIntegerField()
    thr = models.PositiveIntegerField()
    test = models.CharField(max_length=16)
    mb_s = models.FloatField()
    min_mb_s = models.FloatField(null=True, blank=True)
    max_mb_s = models.FloatField(null=True, blank=True)
    flag = models.CharField(max_length=5, blank=True, help_text="ERROR or SHORT")

    class Meta:
        ordering = ["survey", "server", "target", "rsz_kib", "thr", "obj", "id"]
        indexes = [models.Index(fields=["survey", "server", "target"])]

    def __str__(self) -> str:
        where = self.target or self.server or "all"
        return f"{where} {self.test} thr {self.thr}: {self.mb_s} MB/s"

    @property
    def threads_per_ost(self) -> int:
        return self.thr // self.ost if self.ost else 0
