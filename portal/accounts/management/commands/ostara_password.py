"""Give a user a new generated password, without a prompt: for a forgotten admin password."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from portal.accounts.services import password_file_of, reset_password


class Command(BaseCommand):
    help = (
        "Set a new generated password for USERNAME, print it once and keep it in a file "
        "readable by its owner only (RUN_DIR/<username>-password unless --password-file)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--password-file", type=Path, help="where to keep the new password (mode 0600)"
        )

    def handle(self, *args, username: str, password_file: Path | None, **options):
        password_file = password_file or password_file_of(settings.RUN_DIR, username)
        try:
            password = reset_password(username, password_file)
        except get_user_model().DoesNotExist:
            raise CommandError(f"username: no user {username!r}") from None
        except OSError as error:
            raise CommandError(f"--password-file: cannot write {password_file}: {error}") from None
        self.stdout.write(
            f"New password of '{username}': {password}\n"
            f"(shown once; also kept in {password_file}, readable by its owner only)"
        )
