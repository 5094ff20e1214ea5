"""Save one or more specs (an MDS pair and its first SSU, say) and start the provisioning job
that builds them: the same job, through the same service, as the wizard's confirm."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.inventory.management.spec_files import read_password, read_spec
from portal.inventory.provisioning import start_provisioning
from portal.inventory.services import same_bmc_credentials, same_monitor_credentials
from portal.jobs.choices import JobState
from portal.jobs.services import wait_until_finished
from provisioning.planner import SpecError


class Command(BaseCommand):
    help = (
        "Plan SPEC.json files (an MDS pair before its SSUs), save them in one transaction and "
        "start the provisioning job; prints the job id."
    )

    def add_arguments(self, parser):
        parser.add_argument("specs", nargs="+", type=Path, metavar="SPEC.json")
        parser.add_argument("--bmc-user", default="root", help="BMC user name of every server")
        parser.add_argument(
            "--bmc-password-file",
            type=Path,
            help="file holding the BMC password of every server (kept encrypted)",
        )
        parser.add_argument(
            "--monitor-user", default="monitor", help="the arrays' read-only monitor account"
        )
        parser.add_argument(
            "--monitor-password-file",
            type=Path,
            help="file holding the monitor account's password of every array (kept encrypted)",
        )
        parser.add_argument(
            "--wait", action="store_true", help="wait until a worker has finished the job"
        )
        parser.add_argument(
            "--timeout", type=float, default=1800, help="seconds --wait waits at most"
        )

    def handle(
        self,
        *args,
        specs,
        bmc_user,
        bmc_password_file,
        monitor_user,
        monitor_password_file,
        wait,
        timeout,
        **options,
    ):
        documents = [read_spec(path) for path in specs]
        password = read_password(bmc_password_file)
        credentials = same_bmc_credentials(documents, bmc_user, password)
        monitor = same_monitor_credentials(
            documents, monitor_user, read_password(monitor_password_file)
        )
        try:
            job = start_provisioning(documents, credentials, monitor_credentials=monitor)
        except SpecError as error:
            raise CommandError(f"nothing saved:\n{error}") from None
        self.stdout.write(str(job.pk))
        if wait:
            try:
                job = wait_until_finished(job, timeout)
            except TimeoutError as error:
                raise CommandError(str(error)) from None
            self.stderr.write(f"job {job.pk}: {job.state}")
            if job.state != JobState.SUCCEEDED:
                raise CommandError(f"job {job.pk} {job.state}: {job.error or 'see its page'}")
