"""All mail the portal sends goes through this module: one message, one address, one attempt.

Django's mail stack does the SMTP work, through the mail relay an administrator set in
Settings → Mail (``MailRelaySettings``; the ``EMAIL_*`` settings until then). A failed attempt
raises ``MailError`` saying whether trying again can help: a server that does not answer, drops
the line or answers 4xx is temporary, and so is a relay that refuses its login or sender
(Settings → Mail is wrong for every mail until an administrator mends it); a refusal of the
recipient or the message with an SMTP 5xx code is permanent, and so is a message that cannot be
written (a header holding a line break, an address the mail package
refuses) or any other error: the same message would fail the same way again.
"""

from __future__ import annotations

import logging
import smtplib
from email.errors import HeaderParseError

from django.core.mail import BadHeaderError, EmailMultiAlternatives, get_connection

from portal.accounts.crypto import CredentialError
from portal.alerts.models import MailRelaySettings

log = logging.getLogger(__name__)


class MailError(Exception):
    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


def send(*, to: str, subject: str, text: str, html: str = "", message_id: str = "") -> None:
    """Send one message to one address or raise ``MailError``."""
    try:
        relay = MailRelaySettings.current().relay()
    except CredentialError as error:
        raise MailError(f"the mail relay's password: {error}", permanent=False) from None
    try:
        message = EmailMultiAlternatives(
            subject=subject,
            body=text,
            from_email=relay.from_address,
            to=[to],
            headers={"Message-ID": message_id} if message_id else None,
        )
        if html:
            message.attach_alternative(html, "text/html")
        # Django and Python's mail package check the headers only when the message is written
        # out: write it now, so a message that cannot be sent is told apart from a relay that
        # cannot take it.
        message.message().as_bytes(linesep="\r\n")
    except Exception as error:
        raise MailError(f"the mail could not be written: {reason(error)}", permanent=True) from None
    message.connection = get_connection(
        fail_silently=False,
        host=relay.host,
        port=relay.port,
        username=relay.username,
        password=relay.password,
        use_tls=relay.use_tls,
    )
    try:
        message.send()
    except smtplib.SMTPRecipientsRefused as error:
        code, reply = next(iter(error.recipients.values()))
        raise MailError(f"{to} refused: {code} {_text(reply)}", permanent=code >= 500) from None
    except (smtplib.SMTPAuthenticationError, smtplib.SMTPSenderRefused) as error:
        # The relay's login or sender is wrong: every mail would fail so until an administrator
        # mends Settings → Mail, then each should go out. Not this mail's fault: it waits.
        raise MailError(
            f"the mail relay refused its settings (Settings → Mail): {error.smtp_code} "
            f"{_text(error.smtp_error)}",
            permanent=False,
        ) from None
    except smtplib.SMTPResponseException as error:
        if error.smtp_code == 530:  # "authentication required": the relay wants a login
            raise MailError(
                f"the mail relay wants a login (Settings → Mail): {error.smtp_code} "
                f"{_text(error.smtp_error)}",
                permanent=False,
            ) from None
        raise MailError(
            f"the mail server answered {error.smtp_code} {_text(error.smtp_error)}",
            permanent=error.smtp_code >= 500,
        ) from None
    except (TimeoutError, smtplib.SMTPException, OSError) as error:
        raise MailError(f"the mail server could not be reached: {error}", permanent=False) from None
    except Exception as error:
        log.exception("mail to %s could not be sent", to)
        raise MailError(f"the mail could not be sent: {reason(error)}", permanent=True) from None


def reason(error: Exception) -> str:
    """An error as the event page shows it: what kind, and what it said."""
    if isinstance(error, BadHeaderError | HeaderParseError):
        return f"a header would hold a line break ({error})"
    return f"{type(error).__name__}: {error}"


def _text(reply: bytes | str) -> str:
    return reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)
