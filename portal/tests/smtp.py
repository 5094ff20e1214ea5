"""A real SMTP server on loopback (aiosmtpd) for tests: what a site's mail relay is to the
portal. The alerts' tests and the failure matrix on the virtual rack count the mail it keeps."""

from __future__ import annotations

import asyncio
import socket
import threading
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


class Mailbox:
    """Keeps what the server accepted; can refuse recipients with a code of our choosing."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.refuse: dict[str, str] = {}  # address -> SMTP reply
        # Set ``hold``: DATA waits until it is set again, then answers 451 and keeps nothing
        # (the message was never accepted); ``holding`` says a DATA is waiting.
        self.hold: threading.Event | None = None
        self.holding = threading.Event()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.hold is not None:
            self.holding.set()
            await asyncio.get_running_loop().run_in_executor(None, self.hold.wait)
            return "451 4.3.0 not accepted, try again later"
        self.messages.append(message_from_bytes(envelope.original_content, policy=policy.default))
        return "250 Message accepted for delivery"

    def subjects(self) -> list[str]:
        # A long encoded subject is folded from its first line; Python's parser keeps the
        # fold's space in front, which mail programs drop.
        return [str(message["Subject"]).lstrip() for message in self.messages]


class SmtpServer:
    """With ``credentials`` (user, password), a relay that takes mail only after SMTP AUTH."""

    def __init__(self, port: int, credentials: tuple[str, str] | None = None) -> None:
        self.port = port
        self.mailbox = Mailbox()
        self.controller: Controller | None = None
        self.credentials = credentials
        self.logins: list[tuple[str, bool]] = []  # user name, accepted

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        login, password = auth_data.login.decode(), auth_data.password.decode()
        accepted = (login, password) == self.credentials
        self.logins.append((login, accepted))
        return AuthResult(success=accepted, handled=False)  # a refusal answers 535

    def start(self) -> None:
        auth = {}
        if self.credentials:
            auth = {
                "authenticator": self._authenticate,
                "auth_required": True,
                "auth_require_tls": False,  # loopback; a real relay wants STARTTLS first
            }
        self.controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port, **auth)
        self.controller.start()

    def stop(self) -> None:
        if self.controller:
            self.controller.stop()
            self.controller = None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
