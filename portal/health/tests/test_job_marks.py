"""The objects a job acts on (``Job.marks``) reach the health facts while it runs a step that
acts on them (what a pending job will build, too) and for two sensor-silence periods after it
ends, the newest job's mark first; a step that only watches (a drive's reconstruction) holds
nothing; a mark that is not an object key and a way of acting is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from portal.health import rules
from portal.health.services.facts import job_marks
from portal.jobs.choices import JobState, StepState
from portal.jobs.models import Job
from portal.jobs.registry import StepSpec, register
from portal.jobs.services import create_job
from portal.jobs.tests.actions import ONE_STEP, work

WATCHING = register(
    "test_act_then_watch",
    "Act, then watch",
    [StepSpec("act", "Act", work), StepSpec("watch", "Watch", work, acts=False)],
)


def running(job: Job, step: str) -> None:
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING)
    job.steps.filter(name=step).update(state=StepState.RUNNING)


pytestmark = pytest.mark.django_db


def test_marks_hold_while_the_job_runs_and_a_grace_time_after_it_ends():
    failback = create_job(
        ONE_STEP.kind, "Fail back oss01", marks={"server:1": "moves", "target:5": "moves"}
    )
    build = create_job(ONE_STEP.kind, "Provision ssu02", marks={"serverpair:2": "builds"})
    create_job(ONE_STEP.kind, "A survey")  # marks nothing
    # Pending: nothing has moved yet; what it will build has no colour of its own yet.
    assert job_marks(30) == {"serverpair:2": rules.Mark(build.pk, "Provision ssu02", builds=True)}
    running(failback, "preflight")
    found = job_marks(30)
    assert found == {
        "server:1": rules.Mark(failback.pk, "Fail back oss01"),
        "target:5": rules.Mark(failback.pk, "Fail back oss01"),
        "serverpair:2": rules.Mark(build.pk, "Provision ssu02", builds=True),
    }
    # Ended 50 s ago: within two silence periods of 30 s the sensors may not have reported yet.
    ended = timezone.now() - timedelta(seconds=50)
    Job.objects.filter(pk=failback.pk).update(state=JobState.SUCCEEDED, finished=ended)
    assert "server:1" in job_marks(30)
    assert "server:1" not in job_marks(20)
    Job.objects.filter(pk=build.pk).update(state=JobState.FAILED, finished=ended)
    assert job_marks(10) == {}
    # A newer job on the same object is the one shown.
    again = create_job(ONE_STEP.kind, "Fail back oss01 again", marks={"server:1": "moves"})
    running(again, "preflight")
    assert job_marks(30)["server:1"].job == again.pk


def test_a_step_that_only_watches_holds_no_mark():
    """A drive's replacement follows the reconstruction for hours: a second drive lost
    meanwhile is not "moving", it is red and alerts."""
    job = create_job(WATCHING.kind, "Replace a drive", marks={"storagearray:1": "moves"})
    running(job, "act")
    assert "storagearray:1" in job_marks(30)
    job.steps.filter(name="act").update(state=StepState.SUCCEEDED)
    running(job, "watch")
    assert job_marks(30) == {}


@pytest.mark.parametrize("marks", [{"server": "moves"}, {"server:1": "breaks"}, {"-x:1": "moves"}])
def test_a_mark_that_is_not_an_object_and_a_way_of_acting_is_refused(marks):
    with pytest.raises(ValueError, match="marks: "):
        create_job(ONE_STEP.kind, "Odd", marks=marks)
    assert not Job.objects.exists()
