"""The demo's mail server: a real SMTP server on loopback that keeps every message it accepts
in a Maildir, where the portal's Settings → Mail page shows them.

    python -m portal.alerts.mailcatcher --listen 127.0.0.1:PORT --maildir DIR

It delivers nothing onward: on an appliance without a mail relay, it lets a demo user see the
mail the alerts would send. Stopping it is a real SMTP outage (the outbox keeps the mail).
"""

from __future__ import annotations

import argparse
import mailbox
import signal
import threading
from pathlib import Path

from aiosmtpd.controller import Controller


class MaildirHandler:
    def __init__(self, path: Path) -> None:
        self.maildir = mailbox.Maildir(path, create=True)

    async def handle_DATA(self, server, session, envelope):
        message = mailbox.MaildirMessage(envelope.original_content)
        message["X-Ostara-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.maildir.add(message)
        return "250 Message accepted for delivery"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m portal.alerts.mailcatcher")
    parser.add_argument("--listen", default="127.0.0.1:2525", help="HOST:PORT (loopback)")
    parser.add_argument("--maildir", required=True, type=Path, help="where messages are kept")
    args = parser.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    controller = Controller(MaildirHandler(args.maildir), hostname=host, port=int(port))
    controller.start()
    print(f"mail catcher on {host}:{port}, keeping messages in {args.maildir}", flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    main()
