"""Save an SSU or MDS-pair spec into the inventory (the same JSON the planner takes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.inventory.services import save_plan
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
        text = sys.stdin.read() if spec == "-" else Path(spec).read_text()
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise CommandError(f"{spec}: not JSON: {error}") from None
        password = bmc_password_file.read_text().strip() if bmc_password_file else ""
        credentials = {
            server.get("hostname"): (bmc_user, password)
            for server in document.get("servers", [])
            if isinstance(server, dict)
        }
        try:
            pair = save_plan(document, credentials)
        except SpecError as error:
            raise CommandError(f"nothing saved:\n{error}") from None
        self.stdout.write(f"saved {pair.get_kind_display()} {pair.name} of {pair.filesystem.name}")
