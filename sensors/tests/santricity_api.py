"""A small SANtricity REST API for the santricity collector's tests: HTTPS on 127.0.0.1 (an
ephemeral port, a throwaway certificate made with the `openssl` command) serving the bodies in
`fixtures/santricity/`, recording every request it is sent."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "santricity"
SYSTEM = "/devmgr/v2/storage-systems/1"
USER, PASSWORD = "monitor", "m0nitor-pass"
GROUP_WITH_OPERATION = "04000000600A098000F6371400000000000000A1"


def make_certificate(directory: Path, name: str = "array") -> tuple[Path, Path, str]:
    """A self-signed certificate for 127.0.0.1: (certificate, key, SHA-256 of its DER form)."""
    certificate, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "2", "-subj", f"/CN={name}",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(certificate),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    der = ssl.PEM_cert_to_DER_cert(certificate.read_text())
    return certificate, key, hashlib.sha256(der).hexdigest()


def fixture(name: str):
    return json.loads((FIXTURES / f"{name}.json").read_text())


def routes() -> dict:
    """Path -> body of the fixtures' array state."""
    found = {
        f"{SYSTEM}/{name}": fixture(name)
        for name in (
            "hardware-inventory",
            "storage-pools",
            "volumes",
            "analysed-volume-statistics",
            "analysed-drive-statistics",
            "analysed-controller-statistics",
            "analysed-interface-statistics",
        )
    }
    found[f"{SYSTEM}/storage-pools/{GROUP_WITH_OPERATION}/action-progress"] = fixture(
        "action-progress"
    )
    return found


class Controller:
    """One controller's HTTPS server. `events` is its MEL (filtered as the API filters it);
    `status` other than 200 answers every request with it. Requests need basic auth as
    USER with `password` (the array's monitor account)."""

    def __init__(self, certificate: Path, key: Path, password: str = PASSWORD) -> None:
        token = base64.b64encode(f"{USER}:{password}".encode()).decode()
        self.authorization = f"Basic {token}"
        self.routes = routes()
        self.events: list[dict] = copy.deepcopy(fixture("mel-events"))
        self.status = 200
        # True: mel-events ignores startSequenceNumber and gives the whole log (as an array
        # whose log was read from its oldest entry would).
        self.whole_log = False
        # Seconds each answer waits (a controller whose web server hangs after the handshake),
        # and whether it closes the connection after each answer (`Connection: close`).
        self.hang = 0.0
        self.close_each = False
        self.seen: list[tuple[str, dict]] = []  # (path with query, headers) of each request
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.address = ("127.0.0.1", self.port)
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def answer(self, path: str, query: dict) -> tuple[int, object]:
        if self.status != 200:
            return self.status, {"errorMessage": "unavailable"}
        if path == f"{SYSTEM}/mel-events" and self.events is None:
            return 500, {"errorMessage": "the event log is not available"}
        if path == f"{SYSTEM}/mel-events":
            start = 0 if self.whole_log else int(query.get("startSequenceNumber", ["0"])[0])
            count = int(query.get("count", ["8192"])[0])
            kept = [e for e in self.events if int(e["sequenceNumber"]) >= start]
            return 200, kept[:count]
        if path in self.routes:
            return 200, self.routes[path]
        return 404, {"errorMessage": f"no {path}"}

    def log(self, sequence: int, description: str = "Drive failed") -> None:
        """A new MEL entry about drive 0,1,2 (tray slot 2)."""
        self.events.append(
            {
                "sequenceNumber": str(sequence),
                "id": str(sequence),
                "eventType": 0x226C,
                "timeStamp": str(1795733000 + sequence),
                "priority": "priorityCritical",
                "critical": True,
                "componentType": "drive",
                "componentLocation": {
                    "eventComponentType": "drive",
                    "driveLoc": {"tray": 0, "slot": 2},
                },
                "description": description,
            }
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(controller: Controller):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body in two writes: no 40 ms stalls

        def do_GET(self):  # noqa: N802 (http.server's name)
            controller.seen.append((self.path, dict(self.headers)))
            if controller.hang:
                time.sleep(controller.hang)
            url = urllib.parse.urlsplit(self.path)
            if self.headers.get("Authorization") != controller.authorization:
                status, body = 401, {"errorMessage": "unauthorized"}
            else:
                status, body = controller.answer(url.path, urllib.parse.parse_qs(url.query))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if controller.close_each:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return Handler


def closed_port() -> tuple[str, int]:
    """An address where nothing listens: connection refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()


class Silent:
    """An address that accepts TCP connections and never answers (a hung controller)."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.address = self.socket.getsockname()

    def close(self) -> None:
        self.socket.close()
