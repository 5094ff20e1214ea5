"""The management console's records: the audit log (immutable), maintenance windows and drive
replacements. The acts themselves are jobs (portal.jobs); these rows say who asked for what."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from portal.console.choices import Act, ObjectKind, ReplacementState, Via


class ImmutableError(RuntimeError):
    """An audit entry cannot be changed or deleted once written."""


class AuditEntryQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImmutableError("audit entries cannot be changed")

    def delete(self):
        raise ImmutableError("audit entries cannot be deleted")


class AuditEntry(models.Model):
    """Who did what to which object, when and from where, with the job that did it."""

    created = models.DateTimeField(default=timezone.now, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="audit_entries",
        null=True,
        blank=True,
    )
    username = models.CharField(max_length=150, help_text="the author's name when it happened")
    via = models.CharField(max_length=8, choices=Via.choices)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    act = models.CharField(max_length=20, choices=Act.choices)
    object_kind = models.CharField(max_length=10, choices=ObjectKind.choices)
    object_name = models.CharField(max_length=200)
    summary = models.TextField(help_text="what the operator confirmed, in words")
    details = models.JSONField(default=dict, blank=True)
    job = models.ForeignKey(
        "jobs.Job", on_delete=models.PROTECT, related_name="audit_entries", null=True, blank=True
    )
    reverts = models.ForeignKey(
        "self", on_delete=models.PROTECT, related_name="reverted_by", null=True, blank=True
    )

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-pk"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        when = f"{self.created:%Y-%m-%d %H:%M}"
        return f"{when} {self.username}: {self.get_act_display()} {self.object_name}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ImmutableError("audit entries cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableError("audit entries cannot be deleted")

    @property
    def result(self) -> str:
        """The job's state and what it found, in words; a refused act's reasons."""
        if self.job is None:
            refused = self.details.get("refused") if isinstance(self.details, dict) else None
            return f"Refused: {'; '.join(refused)}" if refused else ""
        words = self.job.get_state_display()
        detail = self.job.outcome or self.job.error
        return f"{words}: {detail}" if detail else words

    @property
    def revertible(self) -> bool:
        return self.act == Act.SET_PARAM and bool(self.details.get("old"))


class Maintenance(models.Model):
    """A server taken out of service: its targets on the partner, the node in standby, its
    alerts silenced for the window (its targets' move raises none: health knows the window,
    and their real faults still alert)."""

    server = models.ForeignKey(
        "inventory.Server", on_delete=models.PROTECT, related_name="maintenances"
    )
    reason = models.CharField(max_length=200)
    started = models.DateTimeField(default=timezone.now)
    ends = models.DateTimeField(help_text="when the alerts' silence ends")
    ended = models.DateTimeField(null=True, blank=True)
    silence = models.ForeignKey(
        "alerts.Silence",
        on_delete=models.PROTECT,
        related_name="maintenances",
        null=True,
        blank=True,
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="maintenances"
    )

    class Meta:
        ordering = ["-started"]
        constraints = [
            models.UniqueConstraint(
                fields=["server"],
                condition=models.Q(ended__isnull=True),
                name="%(app_label)s_%(class)s_unique_open_window",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server} in maintenance since {self.started:%Y-%m-%d %H:%M}"


class DriveReplacement(models.Model):
    """One failed drive's way back: located, replaced, reconstructed, optimal."""

    drive = models.ForeignKey(
        "inventory.Drive", on_delete=models.PROTECT, related_name="replacements"
    )
    volume_group = models.CharField(max_length=48, blank=True)
    state = models.CharField(
        max_length=16, choices=ReplacementState.choices, default=ReplacementState.IDENTIFYING
    )
    progress = models.PositiveSmallIntegerField(default=0, help_text="percent, as the array says")
    message = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="drive_replacements"
    )
    job = models.ForeignKey(
        "jobs.Job",
        on_delete=models.PROTECT,
        related_name="drive_replacements",
        null=True,
        blank=True,
    )

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["drive"],
                condition=models.Q(finished__isnull=True),
                name="%(app_label)s_%(class)s_unique_open_replacement",
            ),
        ]

    def __str__(self) -> str:
        return f"replacement of {self.drive} ({self.get_state_display()})"

    @property
    def address(self) -> str:
        """tray,drawer,slot as the array's command names the drive."""
        return f"{self.drive.enclosure.position},{self.drive.drawer},{self.drive.slot}"


class ParameterReading(models.Model):
    """A Lustre parameter as every server of a filesystem reported it, read by a short job
    (``lctl get_param``): the page and the API show it while it is fresh rather than holding a
    request while a playbook runs on every server. Unsaved, it is what a read found for a
    parameter change's own checks."""

    job = models.OneToOneField(
        "jobs.Job", on_delete=models.CASCADE, related_name="parameter_reading"
    )
    filesystem = models.CharField(max_length=8)
    name = models.CharField(max_length=200)
    values = models.JSONField(default=dict, blank=True, help_text="server → {parameter: value}")
    errors = models.JSONField(default=dict, blank=True, help_text="server → why no value")
    read = models.DateTimeField(null=True, blank=True, help_text="when the servers answered")

    class Meta:
        ordering = ["-pk"]
        indexes = [
            models.Index(fields=["filesystem", "name"], name="console_reading_fs_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.filesystem} (job #{self.job_id})"

    @property
    def finished(self) -> bool:
        return self.job.is_finished

    @property
    def age_seconds(self) -> float | None:
        """How long ago its job finished; None while it runs."""
        if self.job.finished is None or not self.job.is_finished:
            return None
        return (timezone.now() - self.job.finished).total_seconds()

    @property
    def matched(self) -> int:
        return sum(len(found) for found in self.values.values())

    def rows(self) -> list[tuple[str, str, str]]:
        return [
            (host, name, value)
            for host, found in sorted(self.values.items())
            for name, value in sorted(found.items())
        ]
