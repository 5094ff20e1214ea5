"""The mail settings page's work: a test mail through the alert mail path, and the mail the
demo's catcher kept (``portal.alerts.mailcatcher``)."""

from __future__ import annotations

import mailbox
from dataclasses import dataclass
from datetime import datetime
from email import policy
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.template.loader import render_to_string

from portal.alerts import mail


def send_test_mail(address: str) -> None:
    """Send one mail now, through the same path as alert mail; raise ``ValueError`` for an
    address that is not one, ``mail.MailError`` when the mail server does not take it."""
    try:
        validate_email(address)
    except ValidationError:
        raise ValueError(f"address: {address!r} is not an e-mail address") from None
    context = {"portal_url": settings.OSTARA_PORTAL_URL, "settings": settings}
    mail.send(
        to=address,
        subject="[Ostara] Test mail",
        text=render_to_string("alerts/mail/test.txt", context),
    )


@dataclass(frozen=True)
class CaughtMail:
    key: str
    received: datetime | None
    to: str
    subject: str
    text: str
    html: str


def caught_mail(path: Path, limit: int = 200) -> list[CaughtMail]:
    """The newest messages the demo's mail catcher kept (``portal.alerts.mailcatcher``)."""
    if not path.is_dir():
        return []
    box = mailbox.Maildir(path, create=False)
    parser = BytesParser(policy=policy.default)
    messages = []
    for key in box.keys():
        with box.get_file(key) as handle:
            message = parser.parse(handle)
        try:
            received = parsedate_to_datetime(str(message["Date"]))
        except (TypeError, ValueError):
            received = None
        text = message.get_body(preferencelist=("plain",))
        html = message.get_body(preferencelist=("html",))
        messages.append(
            CaughtMail(
                key=key,
                received=received,
                to=str(message["X-Ostara-Envelope-To"] or message["To"] or ""),
                subject=str(message["Subject"] or ""),
                text=text.get_content() if text else "",
                html=html.get_content() if html else "",
            )
        )
    messages.sort(key=lambda m: m.received.timestamp() if m.received else 0.0, reverse=True)
    return messages[:limit]
