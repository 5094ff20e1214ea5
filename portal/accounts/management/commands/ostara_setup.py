"""Create the roles and, on first start, the admin account with a generated password."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from portal.accounts.services import ensure_admin


class Command(BaseCommand):
    help = "Create the viewer/operator/admin roles and the first admin account."

    def handle(self, *args, **options):
        account = ensure_admin(settings.RUN_DIR)
        if account.password:
            self.stdout.write(
                f"Created user '{account.username}' with password: {account.password}\n"
                f"(shown once; also kept in {account.password_file}, readable by root only)"
            )
        else:
            self.stdout.write(
                f"User '{account.username}' exists; its first password is in "
                f"{account.password_file} unless it was changed."
            )
