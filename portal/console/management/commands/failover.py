"""manage.py failover SERVER | --target LABEL [--lifetime PT1H] [--yes] [--wait] [--user NAME]

Moves every target running on the server (or one target) to its partner, as ``pcs resource
ban`` with a lifetime. Without --yes it prints which targets would move where (Pacemaker's
what-if) and exits 3.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from portal.console.choices import Act, ObjectKind
from portal.console.management.commands._act import add_common, author, run
from portal.console.services import cluster


class Command(BaseCommand):
    help = "Fail a server's targets (or one target) over to the partner server."
    act = Act.FAILOVER

    def add_arguments(self, parser):
        parser.add_argument("server", nargs="?", help="the server whose targets move")
        parser.add_argument("--target", help="one target instead of a whole server")
        if self.act == Act.FAILOVER:
            parser.add_argument("--lifetime", help="ISO 8601 duration of the ban (default PT1H)")
        add_common(parser)

    def handle(self, *args, **options):
        from django.core.management.base import CommandError

        if bool(options["server"]) == bool(options["target"]):
            raise CommandError("name a server or --target LABEL (not both)")
        kind = ObjectKind.SERVER if options["server"] else ObjectKind.TARGET

        def call():
            subject = cluster.subject_of(kind, options["server"] or options["target"])
            return cluster.start(
                self.act,
                subject,
                author(options),
                confirmed=options["yes"],
                lifetime=options.get("lifetime"),
            )

        run(self, call, options)
