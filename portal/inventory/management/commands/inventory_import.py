"""Save an SSU or MDS-pair spec into the inventory (the same JSON the planner takes)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.inventory.management.spec_files import read_password, read_spec
from portal.inventory.services import same_bmc_credentials, save_plan
from provisioning.planner import SpecError


class Command(BaseCommand):
    help = "Plan SPEC.json and save every row of the plan in one transaction."

    def add_arguments(self, parser):
        parser.add_argument("spec", help="spec file, or - for standard input")
        parser.add_argument("--bmc-user", default="", help="BMC user name for both servers")
        parser.add_argument(
            "--bmc-password-file", type=Path, help="file holding the BMC password (kept encrypted)"
        )

    def handle(self, *args, spec, bmc_user, bmc_password_file, **options):
        document = read_spec(spec)
        password = read_password(bmc_password_file)
        credentials = same_bmc_credentials([document], bmc_user, password)
        try:
            pair = save_plan(document, credentials)
        except SpecError as error:
            raise CommandError(f"nothing saved:\n{error}") from None
        self.stdout.write(f"saved {pair.get_kind_display()} {pair.name} of {pair.filesystem.name}")
