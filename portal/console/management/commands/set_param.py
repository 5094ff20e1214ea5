"""manage.py set_param FILESYSTEM NAME=VALUE (--servers oss01,oss02 | --permanent)
                       [--yes] [--wait] [--user NAME]

Sets a Lustre parameter with lctl on chosen servers (until they restart) or for good through
the MGS (``lctl set_param -P``). Without --yes it prints the old and new values and exits 3.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from portal.console.management.commands._act import add_common, author, run
from portal.console.services import params
from portal.inventory.models import Filesystem


class Command(BaseCommand):
    help = "Set a Lustre parameter on servers, or permanently through the MGS."

    def add_arguments(self, parser):
        parser.add_argument("filesystem")
        parser.add_argument("setting", help="NAME=VALUE, e.g. osc.*.max_rpcs_in_flight=16")
        parser.add_argument("--servers", default="", help="comma-separated server names")
        parser.add_argument("--permanent", action="store_true", help="lctl set_param -P")
        add_common(parser)

    def handle(self, *args, **options):
        filesystem = Filesystem.objects.filter(name=options["filesystem"]).first()
        if filesystem is None:
            raise CommandError(f"filesystem: no filesystem named {options['filesystem']!r}")
        name, sep, value = options["setting"].partition("=")
        if not sep:
            raise CommandError("setting: expected NAME=VALUE")
        hosts = [host.strip() for host in options["servers"].split(",") if host.strip()]

        def call():
            return params.start_set(
                filesystem,
                name,
                value,
                author(options),
                hosts=hosts or None,
                permanent=options["permanent"],
                confirmed=options["yes"],
            )

        run(self, call, options)
