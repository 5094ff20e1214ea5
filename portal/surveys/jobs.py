"""The survey job kind, and the acceptance survey that ends a provisioning job.

Both run the same phases of ``survey.yml`` (``services``): check that every OST is set up where
it is mounted, the load curve of each server's OSTs together, each OST alone, then the verdict.
The job's outcome is the verdict's sentence; a survey that fails makes the job fail with its
reasons (the hardware fell short, the job did its work).
"""

from __future__ import annotations

from portal.inventory.choices import PairKind
from portal.inventory.provisioning import add_provisioning_step
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed, StepSpec, register
from portal.jobs.worker import StepRun
from portal.surveys import choices, services
from portal.surveys.choices import Scope, Verdict
from portal.surveys.models import Survey


def _survey_step(action):
    """A step of the survey job: on its survey, which shows "did not finish" if the step stops
    the job (and "running" again when the job is retried)."""

    def step(run: StepRun) -> None:
        survey = services.job_survey(run.job)
        Survey.objects.filter(pk=survey.pk).update(verdict=Verdict.PENDING, finished=None)
        try:
            action(run, survey)
        except Exception as error:
            services.mark_unfinished(survey, f"{run.step.title}: {error}")
            raise

    return step


def _check(run: StepRun, survey: Survey) -> None:
    services.check(survey, run.console.say, run.console.write)


def _survey(run: StepRun, survey: Survey) -> None:
    """Measure and judge in one step: a retry after a failed verdict measures again (the
    hardware may have been mended), it does not judge the old output twice."""
    say, write = run.console.say, run.console.write
    services.measure(survey, say, write)
    services.measure_targets(survey, say, write)
    _finish(run, [services.conclude(survey)])


def _finish(run: StepRun, surveys: list[Survey]) -> None:
    sentences = [services.outcome(survey) for survey in surveys]
    for sentence in sentences:
        run.console.say(sentence)
    Job.objects.filter(pk=run.job.pk).update(outcome="\n".join(sentences))
    failed = [s for s, survey in zip(sentences, surveys, strict=True) if survey.verdict != "pass"]
    if failed:
        raise StepFailed("; ".join(failed))


register(
    services.KIND,
    "obdfilter-survey",
    [
        StepSpec(
            "check",
            "Check that every OST is mounted and set up on its server",
            _survey_step(_check),
        ),
        StepSpec(
            "survey",
            "Survey each server's OSTs together, then each OST alone, and judge the results",
            _survey_step(_survey),
        ),
    ],
)


def acceptance(run: StepRun) -> None:
    """The last step of a provisioning job (``portal.inventory.provisioning``, which this module
    adds it to): an acceptance survey of every new SSU of the job, with the figures of
    ``choices.ACCEPTANCE``."""
    pairs = [pair for pair in run.job.pairs.order_by("name") if pair.kind == PairKind.OSS]
    if not pairs:
        run.console.say("no OSS pair in this job: nothing to survey")
        return
    if run.job.params.get("skip_acceptance"):
        reason = run.job.params.get("skip_reason", "not asked for")
        run.console.say(f"acceptance survey skipped: {reason}")
        Job.objects.filter(pk=run.job.pk).update(outcome=f"acceptance survey skipped: {reason}")
        return
    surveys = []
    say, write = run.console.say, run.console.write
    for pair in pairs:
        by_server = services.targets_to_survey(pair, Scope.SSU)
        parameters = services.parameters_of(choices.ACCEPTANCE)
        survey = services.new_survey(
            pair, Scope.SSU, by_server, parameters, run.job.created_by, [], acceptance=True
        )
        Survey.objects.filter(pk=survey.pk).update(job=run.job)
        try:
            services.check(survey, say, write)
            services.measure(survey, say, write)
            services.measure_targets(survey, say, write)
            surveys.append(services.conclude(survey))
        except Exception as error:
            services.mark_unfinished(survey, f"{run.step.title}: {error}")
            raise
    _finish(run, surveys)


add_provisioning_step(
    StepSpec("accept", "Acceptance: obdfilter-survey of each new SSU against its plan", acceptance)
)
