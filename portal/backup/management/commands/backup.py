"""Write one archive of the database, the run directory's secrets and the metrics."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.backup.archive import BackupError, backup


class Command(BaseCommand):
    help = (
        "Back up the database, the run directory's secrets and an InfluxDB snapshot into one "
        "tar.gz (mode 0600; default RUN_DIR/backups/ostara-<UTC time>.tar.gz)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--output", type=Path, help="the archive to write (must not exist)")
        parser.add_argument(
            "--no-metrics", action="store_true", help="leave the InfluxDB snapshot out"
        )

    def handle(self, *args, **options):
        try:
            backup(options["output"], metrics=not options["no_metrics"], say=self.stdout.write)
        except BackupError as error:
            raise CommandError(str(error)) from None
