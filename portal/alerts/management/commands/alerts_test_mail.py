"""Send a test mail through the alert mail path: `manage.py alerts_test_mail ADDRESS`."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from portal.alerts import mail
from portal.alerts.services.mail_settings import send_test_mail


class Command(BaseCommand):
    help = "Send a test mail to ADDRESS with the portal's mail settings (EMAIL_*)."

    def add_arguments(self, parser):
        parser.add_argument("address")

    def handle(self, *args, address: str, **options):
        try:
            send_test_mail(address)
        except (ValueError, mail.MailError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"sent a test mail to {address}")
