"""Jobs: every long action (provisioning, surveys, failback, drive replacement) is a Job with
ordered Steps. The Celery queue only carries the job's id; the state lives here."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from portal.jobs.choices import JOB_TRANSITIONS, JobState, StepState
from portal.jobs.registry import UnknownJobKind, job_kind

# A step's captured output is kept to this many characters (the head and the tail survive).
OUTPUT_LIMIT = 400_000
FINISHED_STATES = (
    JobState.SUCCEEDED,
    JobState.FAILED,
    JobState.ERRORED,
    JobState.CANCELLED,
    JobState.INTERRUPTED,
)


class TransitionError(RuntimeError):
    """A job was asked to move to a state it cannot reach from where it is."""


class Job(models.Model):
    # A kind registered in portal.jobs.registry by the app that defines the action.
    kind = models.CharField(max_length=32)
    title = models.CharField(max_length=200)
    state = models.CharField(max_length=12, choices=JobState.choices, default=JobState.PENDING)
    params = models.JSONField(default=dict, blank=True)
    pairs = models.ManyToManyField("inventory.ServerPair", related_name="jobs", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="jobs",
        null=True,
        blank=True,
    )
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0, help_text="runs so far, retries included")
    error = models.TextField(blank=True, help_text="why the last run failed or errored")
    outcome = models.TextField(
        blank=True, help_text="what the last run found, in words (a survey's verdict)"
    )
    queued = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when it was last handed to the queue; empty while Redis did not take it",
    )
    worker = models.CharField(
        max_length=200, blank=True, help_text="the Celery node that claimed its last run"
    )
    worker_pid = models.PositiveIntegerField(
        null=True, blank=True, help_text="the process of that node that runs it"
    )
    marks = models.JSONField(
        default=dict,
        blank=True,
        help_text="the objects it acts on by their key ('server:3', 'serverpair:1') and how "
        "(moves or builds): their health shows the job instead of an alarm while it runs",
    )
    logs_pruned = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when its steps' logs and output were deleted under the retention setting",
    )

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title}"

    @property
    def kind_label(self) -> str:
        try:
            return job_kind(self.kind).label
        except UnknownJobKind:
            return self.kind

    def transition_to(self, new_state: str, *, unchanged: tuple[str, ...] = (), **fields) -> None:
        """Move to ``new_state`` only if nobody else moved the job first.

        The update is conditional on the state this object last saw, so two workers (or a
        duplicate Celery delivery) cannot both start, finish or retry the same job; and on the
        ``unchanged`` fields too (a sweep interrupts the run it looked at, not a later one).
        """
        old_state = self.state
        if new_state not in JOB_TRANSITIONS.get(old_state, set()):
            raise TransitionError(f"job {self.pk}: {old_state} -> {new_state} is not allowed")
        now = timezone.now()
        if new_state == JobState.RUNNING:
            fields.setdefault("started", now)
            fields["finished"] = None
        elif new_state in FINISHED_STATES:
            fields.setdefault("finished", now)
        seen = {name: getattr(self, name) for name in unchanged}
        updated = Job.objects.filter(pk=self.pk, state=old_state, **seen).update(
            state=new_state, **fields
        )
        if updated != 1:
            current = Job.objects.filter(pk=self.pk).values_list("state", flat=True).first()
            raise TransitionError(
                f"job {self.pk}: expected {old_state}, found {current}; someone else moved it"
            )
        self.state = new_state
        for name, value in fields.items():
            setattr(self, name, value)

    @property
    def is_finished(self) -> bool:
        return self.state in FINISHED_STATES

    @property
    def progress_percent(self) -> int:
        """The share of its steps done, the running step counted by how far it says it is
        (a drive's reconstruction moves the job on as the array's percentage grows)."""
        steps = list(self.steps.values_list("state", "progress"))
        if not steps:
            return 0
        succeeded = sum(1 for state, _progress in steps if state == StepState.SUCCEEDED)
        if succeeded == len(steps):
            return 100
        running = sum(
            (progress or 0) / 100 for state, progress in steps if state == StepState.RUNNING
        )
        # Short of 100 % until every step has succeeded (a step at 99.6 % is not done).
        return min(round(100 * (succeeded + running) / len(steps)), 99)

    @property
    def current_step(self) -> Step | None:
        return (
            self.steps.filter(
                state__in=[StepState.RUNNING, StepState.FAILED, StepState.ERRORED]
            ).first()
            or self.steps.filter(state=StepState.PENDING).first()
        )


class Step(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=64)
    title = models.CharField(max_length=200)
    # The function that performs the step is the registry's: job_kind(job.kind).step(name).
    idempotent = models.BooleanField(default=True)
    state = models.CharField(max_length=10, choices=StepState.choices, default=StepState.PENDING)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    log = models.TextField(blank=True, help_text="what the step did, in words")
    output = models.TextField(blank=True, help_text="captured command output")
    progress = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="how far the step is, in percent, when it can tell (a reconstruction: the "
        "array's own percentage); empty for a step that cannot",
    )

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "position"], name="%(app_label)s_%(class)s_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.job_id}.{self.position} {self.name}"

    @property
    def duration_seconds(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None


def object_key(row: models.Model) -> str:
    """The key an object is marked by and known by in health ("target:12")."""
    return f"{row._meta.model_name}:{row.pk}"
