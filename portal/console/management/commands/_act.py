"""What the console's commands share: the author, the confirmation and the wait."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from portal.console.services import Author, ConfirmationNeeded, ConsoleError, Refused
from portal.jobs.choices import JobState
from portal.jobs.services import wait_until_finished

# Exit status when the act needs --yes: what it would do was printed, nothing started.
EXIT_NEEDS_CONFIRMATION = 3


def add_common(parser) -> None:
    parser.add_argument(
        "--user",
        default="",
        help="the portal user whose act it is in the audit log (default: the system account "
        "running the command)",
    )
    parser.add_argument("--yes", action="store_true", help="go ahead without asking")
    parser.add_argument("--wait", action="store_true", help="wait for the job and print it")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds --wait waits")
    parser.add_argument("--json", action="store_true", help="print JSON")


def author(options) -> Author:
    user = None
    if options["user"]:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"user: no user named {options['user']!r}")
    return Author.of_command(user)


def run(command, call, options) -> None:
    """Start the act; print what it would do (exit 3) without --yes, the job with it."""
    try:
        job = call()
    except ConfirmationNeeded as needed:
        proposal = needed.proposal
        if options["json"]:
            command.stdout.write(
                json.dumps(
                    {
                        "title": proposal.title,
                        "lines": proposal.lines,
                        "warnings": proposal.warnings,
                    }
                )
            )
        else:
            command.stdout.write(proposal.title)
            for line in proposal.lines + proposal.warnings:
                command.stdout.write(f"  {line}")
            command.stdout.write("nothing started: run again with --yes to go ahead")
        raise SystemExit(EXIT_NEEDS_CONFIRMATION) from None
    except Refused as refused:
        raise CommandError(f"refused: {'; '.join(refused.reasons)}") from None
    except ConsoleError as error:
        raise CommandError(f"{error.field}: {error}") from None
    if not options["wait"]:
        command.stdout.write(
            json.dumps({"job": job.pk}) if options["json"] else f"job #{job.pk}: {job.title}"
        )
        return
    job = wait_until_finished(job, options["timeout"])
    if options["json"]:
        command.stdout.write(
            json.dumps(
                {"job": job.pk, "state": job.state, "outcome": job.outcome, "error": job.error}
            )
        )
    else:
        command.stdout.write(f"job #{job.pk} {job.state}: {job.outcome or job.error}")
    if job.state != JobState.SUCCEEDED:
        raise CommandError(f"job #{job.pk} {job.state}: {job.error}")
