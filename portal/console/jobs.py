"""The console's job kinds: failover, failback, maintenance, a drive's locate and replacement,
parameter changes and reads. Each works its act out again on the rack as it is when the job runs
(the operator confirmed a what-if a moment ago; the job checks it still holds)."""

from __future__ import annotations

from portal.console.choices import (
    KIND_DRIVE_LOCATE,
    KIND_DRIVE_REPLACE,
    KIND_FAILBACK,
    KIND_FAILOVER,
    KIND_MAINTENANCE,
    KIND_READ_PARAM,
    KIND_SET_PARAM,
)
from portal.console.services import cluster, drives, params
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed, StepSpec, register
from portal.jobs.worker import StepRun


def _outcome(run: StepRun, sentence: str) -> None:
    run.console.say(sentence)
    Job.objects.filter(pk=run.job.pk).update(outcome=sentence)


def _cluster_context(job: Job) -> dict:
    return {}


def _check_cluster(run: StepRun) -> None:
    say, write = run.console.say, run.console.write
    try:
        worked_out = cluster.job_plan(run.job, say, write)
    except cluster.Refused as refused:
        raise StepFailed("; ".join(refused.reasons)) from None
    for line in worked_out.proposal.lines:
        say(f"what-if: {line}")
    run.context["plan"] = worked_out


def _act_on_cluster(run: StepRun) -> None:
    say, write = run.console.say, run.console.write
    worked_out = run.context.get("plan")
    if worked_out is None:  # a retry from this step: work it out again
        _check_cluster(run)
        worked_out = run.context["plan"]
    _outcome(run, cluster.carry_out(run.job, worked_out, say, write))


CLUSTER_STEPS = [
    StepSpec(
        "check",
        "Read the cluster and ask Pacemaker's scheduler which targets move where",
        _check_cluster,
    ),
    StepSpec(
        "act",
        "Run the commands and wait until every target runs where Pacemaker said",
        _act_on_cluster,
    ),
]
for kind, label in (
    (KIND_FAILOVER, "Failover"),
    (KIND_FAILBACK, "Failback"),
    (KIND_MAINTENANCE, "Maintenance"),
):
    register(kind, label, CLUSTER_STEPS, context=_cluster_context)


def _set(run: StepRun) -> None:
    params.apply(run.job, run.console.say, run.console.write)


def _verify(run: StepRun) -> None:
    _outcome(run, params.verify(run.job, run.console.say, run.console.write))


register(
    KIND_SET_PARAM,
    "Lustre parameter",
    [
        StepSpec("set", "Set the parameter with lctl", _set),
        StepSpec("verify", "Read it back on every server", _verify),
    ],
)


def _take_reading(run: StepRun) -> None:
    _outcome(run, params.take_reading(run.job, run.console.say, run.console.write))


register(
    KIND_READ_PARAM,
    "Read a Lustre parameter",
    [StepSpec("read", "Read it on every server (lctl get_param)", _take_reading)],
)


def _replacement_step(action, *, follows_the_array: bool = False):
    def step(run: StepRun) -> None:
        replacement = drives.job_replacement(run.job)
        # The step that watches the reconstruction moves the job on with the array's percentage.
        extra = {"progress": run.report_progress} if follows_the_array else {}
        try:
            sentence = action(replacement, run.console.say, run.console.write, **extra)
        except StepFailed as failure:
            drives.stopped(replacement, str(failure))
            raise
        if sentence:
            _outcome(run, sentence)

    return step


register(
    KIND_DRIVE_LOCATE,
    "Locate a drive",
    [StepSpec("locate", "Blink the drive's locate LED", _replacement_step(drives.locate))],
)
register(
    KIND_DRIVE_REPLACE,
    "Replace a drive",
    [
        StepSpec(
            "check",
            "Check that the array sees a new drive in the slot",
            _replacement_step(drives.check),
        ),
        StepSpec(
            "reconstruct",
            "Start the reconstruction (or the copy-back from the hot spare)",
            _replacement_step(drives.reconstruct),
        ),
        StepSpec(
            "watch",
            "Follow the array until the volume group is optimal",
            _replacement_step(drives.watch, follows_the_array=True),
            # Hours of reconstruction: a second drive lost meanwhile must turn red and alert.
            acts=False,
        ),
    ],
)
