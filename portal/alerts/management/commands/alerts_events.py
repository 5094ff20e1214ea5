"""List alert events: `manage.py alerts_events [--all] [--severity S] [--object TEXT] [--json]`.

By default the firing ones, critical first; ``--all`` adds the resolved history, newest first.
One line each (tab-separated: id, opened, severity, status, object, rule, summary), or one
JSON object per line with ``--json``.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from portal.alerts.choices import EventStatus, Severity
from portal.alerts.models import Event
from portal.alerts.services.evaluation import active_events


class Command(BaseCommand):
    help = "List the firing alert events (--all: the history too)."

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="resolved events too")
        parser.add_argument("--severity", choices=Severity.values)
        parser.add_argument("--object", help="only objects whose name contains this")
        parser.add_argument("--json", action="store_true", help="one JSON object per line")
        parser.add_argument("--limit", type=int, default=200)

    def handle(self, *args, **options):
        if options["limit"] < 1:
            raise CommandError("--limit: give a positive number")
        if options["all"]:
            events = list(
                Event.objects.exclude(status=EventStatus.PENDING)
                .select_related("rule", "acknowledged_by")
                .order_by("-opened", "-pk")
            )
        else:
            events = active_events()
        if options["severity"]:
            events = [e for e in events if e.severity == options["severity"]]
        if options["object"]:
            events = [e for e in events if options["object"].lower() in e.object_label.lower()]
        for event in events[: options["limit"]]:
            row = {
                "id": event.pk,
                "opened": event.opened.isoformat(timespec="seconds"),
                "severity": event.severity,
                "status": event.status,
                "acknowledged": bool(event.acknowledged_at),
                "object": event.object_label,
                "rule": event.rule.name,
                "summary": event.summary,
            }
            if options["json"]:
                self.stdout.write(json.dumps(row))
            else:
                status = row["status"] + (" (ack)" if row["acknowledged"] else "")
                self.stdout.write(
                    "\t".join(
                        str(v)
                        for v in (
                            row["id"],
                            row["opened"],
                            row["severity"],
                            status,
                            row["object"],
                            row["rule"],
                            row["summary"],
                        )
                    )
                )
        if not events and not options["json"]:
            self.stderr.write("no events" if options["all"] else "nothing is firing")
