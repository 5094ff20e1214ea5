"""Save an SSU or MDS-pair spec into the inventory (the same JSON the planner takes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

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
        try:
            text = sys.stdin.read() if spec == "-" else Path(spec).read_text()
            document = json.loads(text)
        except ValueError as error:  # not JSON, or not UTF-8
            raise CommandError(f"{spec}: not JSON: {error}") from None
        except RecursionError:
            raise CommandError(f"{spec}: not a spec: nested too deeply") from None
        try:
            password = bmc_password_file.read_text().strip() if bmc_password_file else ""
        except OSError as error:
            raise CommandError(f"{bmc_password_file}: {error}") from None
        credentials = same_bmc_credentials([document], bmc_user, password)
        try:
            pair = save_plan(document, credentials)
        except SpecError as error:
            raise CommandError(f"nothing saved:\n{error}") from None
        self.stdout.write(f"saved {pair.get_kind_display()} {pair.name} of {pair.filesystem.name}")
