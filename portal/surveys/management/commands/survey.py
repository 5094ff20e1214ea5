"""Start an obdfilter-survey of an SSU, an OSS or chosen OSTs from the command line, or print
the verdict of an earlier one, so sites can script acceptance and periodic checks.

    manage.py survey SSU [--server HOST | --targets LABEL ...] [--size-mb N] [--threads LO HI]
                         [--objects LO HI] [--record-kib LO HI] [--tests write read]
                         [--no-per-target] [--tolerance 0.9] [--yes] [--wait] [--json]
    manage.py survey --show ID [--json]

With --wait it prints the verdict and exits 0 only when the survey passed.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from portal.console.management.commands._act import author
from portal.inventory.models import ServerPair
from portal.jobs.services import wait_until_finished
from portal.surveys import choices, services
from portal.surveys.api.serializers import SurveySerializer
from portal.surveys.choices import Scope, Verdict
from portal.surveys.models import Survey


class Command(BaseCommand):
    help = "Start an obdfilter-survey of an SSU (or one OSS, or chosen OSTs), or show one."

    def add_arguments(self, parser):
        parser.add_argument("ssu", nargs="?", help="the SSU (OSS pair) to survey")
        parser.add_argument("--show", type=int, metavar="ID", help="print survey ID and stop")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--server", help="survey the OSTs mounted on this OSS only")
        where.add_argument("--targets", nargs="+", metavar="LABEL", help="survey these OSTs")
        accepted = choices.ACCEPTANCE
        parser.add_argument("--size-mb", type=int, default=accepted["size_mb"])
        parser.add_argument(
            "--threads",
            type=int,
            nargs=2,
            metavar=("LO", "HI"),
            default=[accepted["thr_lo"], accepted["thr_hi"]],
        )
        parser.add_argument(
            "--objects",
            type=int,
            nargs=2,
            metavar=("LO", "HI"),
            default=[accepted["obj_lo"], accepted["obj_hi"]],
        )
        parser.add_argument(
            "--record-kib",
            type=int,
            nargs=2,
            metavar=("LO", "HI"),
            default=[accepted["rsz_lo_kib"], accepted["rsz_hi_kib"]],
        )
        parser.add_argument("--tests", nargs="+", default=list(choices.TESTS))
        parser.add_argument("--no-per-target", action="store_true", help="skip each OST alone")
        parser.add_argument("--tolerance", type=float, default=accepted["tolerance"])
        parser.add_argument(
            "--yes",
            action="store_true",
            help="run even if clients or traffic are on the filesystem",
        )
        parser.add_argument("--wait", action="store_true", help="wait for the verdict")
        parser.add_argument("--timeout", type=float, default=7200)
        parser.add_argument("--json", action="store_true", help="print the survey as JSON")
        parser.add_argument(
            "--user",
            default="",
            help="the portal user who starts it, in the audit log (default: the system account "
            "running the command)",
        )

    def handle(self, *args, **options):
        if options["show"] is not None:
            survey = Survey.objects.filter(pk=options["show"]).first()
            if survey is None:
                raise CommandError(f"no survey #{options['show']}")
            self._print(survey, options["json"])
            return
        if not options["ssu"]:
            raise CommandError("name the SSU to survey (or --show ID)")
        pair = ServerPair.objects.filter(name=options["ssu"]).first()
        if pair is None:
            raise CommandError(f"ssu: no SSU named {options['ssu']!r}")
        scope = (
            Scope.SERVER
            if options["server"]
            else Scope.TARGETS
            if options["targets"]
            else Scope.SSU
        )
        parameters = {
            "size_mb": options["size_mb"],
            "thr_lo": options["threads"][0],
            "thr_hi": options["threads"][1],
            "obj_lo": options["objects"][0],
            "obj_hi": options["objects"][1],
            "rsz_lo_kib": options["record_kib"][0],
            "rsz_hi_kib": options["record_kib"][1],
            "tests": options["tests"],
            "per_target": not options["no_per_target"],
            "tolerance": options["tolerance"],
        }
        try:
            survey = services.start_survey(
                pair,
                scope=scope,
                server=options["server"],
                labels=options["targets"],
                parameters=parameters,
                author=author(options),
                confirmed=options["yes"],
            )
        except services.SurveyError as error:
            raise CommandError(f"nothing started: {error}") from None
        except services.ConfirmationNeeded as needed:
            raise CommandError(
                "nothing started: " + "; ".join(needed.warnings) + " (--yes runs it anyway)"
            ) from None
        self.stderr.write(f"survey {survey.pk} started as job {survey.job_id}")
        if not options["wait"]:
            self.stdout.write(str(survey.pk))
            return
        try:
            wait_until_finished(survey.job, options["timeout"])
        except TimeoutError as error:
            raise CommandError(str(error)) from None
        survey.refresh_from_db()
        self._print(survey, options["json"])
        if survey.verdict != Verdict.PASS:
            raise CommandError(f"survey {survey.pk}: {survey.get_verdict_display().lower()}")

    def _print(self, survey: Survey, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(SurveySerializer(survey).data, default=str))
            return
        self.stdout.write(f"survey {survey.pk} of {survey.pair.name}: {survey.verdict}")
        if survey.measured_mb_s:
            self.stdout.write(services.outcome(survey))
        for reason in survey.reasons:
            self.stdout.write(f"  - {reason}")
