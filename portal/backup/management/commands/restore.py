"""Restore an archive written by `manage.py backup` into this run directory and its services."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.backup.archive import BackupError, restore


class Command(BaseCommand):
    help = (
        "Restore a backup archive: checks it whole first, then the database (migrated, loaded "
        "in one transaction), the secrets into RUN_DIR (mode 0600) and the InfluxDB snapshot."
    )

    def add_arguments(self, parser):
        parser.add_argument("archive", type=Path)
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace a database in use and an existing InfluxDB database",
        )
        parser.add_argument("--no-metrics", action="store_true", help="leave InfluxDB as it is")

    def handle(self, *args, **options):
        try:
            restore(
                options["archive"],
                force=options["force"],
                metrics=not options["no_metrics"],
                say=self.stdout.write,
            )
        except BackupError as error:
            raise CommandError(str(error)) from None
