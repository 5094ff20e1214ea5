"""The arrays' REST API server: one HTTPS listener per array controller on the loopback, each
serving the whole array (as both controllers of an E-series array do), from the rack's state.

Requests read rack.json (reloaded when it changes, under the rack's shared lock), never write
it. A controller that is failed in the rack (`inject controller-failed`) stops listening: its
port refuses connections, as a dead controller's does, and listens again once it is repaired.
Every request needs HTTP basic auth as the array's monitor account (its own password);
anything else is 401. Each controller serves its own certificate.

    api = ArraysApi(rack_dir)
    api.start()        # records missing certificates, passwords and ports, then listens
    ...
    api.stop()         # closes every port and joins its threads

`python -m simulator arrays-api --rack DIR` runs one in the foreground until SIGTERM;
`python -m simulator serve --arrays-api` runs one beside the clock.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from simulator.santricity import access, model
from simulator.state import STATE_FILE, load_state, rack_lock

# How often the server looks at the rack for failed or repaired controllers and new arrays.
WATCH_SECONDS = 0.25

V2 = "/devmgr/v2/storage-systems"
LISTS = {
    "drives": lambda state, array: model.drives(array),
    "storage-pools": lambda state, array: model.storage_pools(array),
    "volumes": lambda state, array: model.volumes(array),
    "controllers": model.controllers,
    "hardware-inventory": model.hardware_inventory,
    "failures": lambda state, array: model.failures(array),
    **model.ANALYSED,
}


class _Listener(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, api: ArraysApi, array: str, controller: str, port: int, context, password: str
    ):
        self.api = api
        self.array = array
        self.controller = controller
        self.password = password
        super().__init__((access.ADDRESS, port), _Handler)
        # The TLS handshake happens in the request's thread, not in the accepting loop.
        self.socket = context.wrap_socket(
            self.socket, server_side=True, do_handshake_on_connect=False
        )


class _Handler(BaseHTTPRequestHandler):
    server: _Listener
    protocol_version = "HTTP/1.1"
    server_version = "SANtricity-WebServices"

    def log_message(self, format, *args) -> None:  # noqa: A002 - the base class's name
        pass

    def _send(self, status: int, body: object, headers: dict | None = None) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        self._send(
            status,
            {
                "errorMessage": message,
                "localizedMessage": message,
                "retcode": str(status),
                "codeType": "devicemgrerror",
            },
            headers,
        )

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            user, _, given = base64.b64decode(header[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        expected = self.server.password
        return user == access.USER and hmac.compare_digest(given, expected)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer("GET")

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._answer("POST")

    def _answer(self, method: str) -> None:
        api = self.server.api
        if api.response_seconds:
            time.sleep(api.response_seconds)
        state = api.state()
        array = state["arrays"].get(self.server.array)
        if array is None or array["controllers"].get(self.server.controller) != "optimal":
            # A dead controller says nothing: the connection just ends.
            self.close_connection = True
            return
        if not self._authorized():
            self._error(401, "Unauthorized", {"WWW-Authenticate": 'Basic realm="devmgr"'})
            return
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        parts = [p for p in url.path.split("/") if p]
        try:
            body = self._route(method, parts, query, state, array)
        except ValueError as problem:
            self._error(422, str(problem))
            return
        if body is None:
            self._error(404, f"no resource at {url.path}")
        else:
            self._send(200, body)

    def _route(self, method, parts, query, state, array):
        controller = self.server.controller
        if parts == ["devmgr", "utils", "about"] and method == "GET":
            return model.about(array, controller)
        if parts[:3] != ["devmgr", "v2", "storage-systems"]:
            return None
        rest = parts[3:]
        if not rest:
            return [model.storage_system(array)] if method == "GET" else None
        if rest[0] not in (model.SYSTEM_ID, array["management"]["wwn"]):
            return None
        rest = rest[1:]
        if method == "POST":
            if rest == ["symbol", "getLongLivedOpsProgress"]:
                return model.long_lived_ops(state, array)
            return None
        if not rest:
            return model.storage_system(array)
        if len(rest) == 1 and rest[0] in LISTS:
            return LISTS[rest[0]](state, array)
        if rest == ["mel-events"]:
            return model.mel_events(
                array,
                _integer(query, "startSequenceNumber"),
                _integer(query, "count"),
                query.get("critical", "false").lower() == "true",
            )
        if len(rest) == 3 and rest[0] == "storage-pools" and rest[2] == "action-progress":
            name = model.group_by_ref(array, rest[1])
            return model.action_progress(state, array, name) if name else None
        return None


def _integer(query: dict, name: str) -> int | None:
    if name not in query:
        return None
    try:
        return int(query[name])
    except ValueError:
        raise ValueError(f"{name} must be an integer, not {query[name]!r}") from None


class ArraysApi:
    def __init__(self, root: Path | str, *, response_seconds: float = 0.0):
        """`response_seconds`: how long each answer takes (a real controller's embedded web
        server is not instant; tests keep 0)."""
        self.root = Path(root).resolve()
        self.response_seconds = response_seconds
        self._state: dict | None = None
        self._stamp: tuple[int, int] | None = None
        self._load = threading.Lock()
        self._listeners: dict[tuple[str, str], tuple[_Listener, threading.Thread]] = {}
        self._contexts: dict[tuple[str, str], ssl.SSLContext] = {}
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # -- the rack's state ------------------------------------------------------------------

    def state(self) -> dict:
        """The rack as last saved (reloaded when rack.json changed)."""
        path = self.root / STATE_FILE
        with self._load:
            stat = os.stat(path)
            stamp = (stat.st_mtime_ns, stat.st_size)
            if stamp != self._stamp or self._state is None:
                with rack_lock(self.root, shared=True):
                    self._state = load_state(self.root)
                self._stamp = stamp
            return self._state

    def _record(self, change) -> None:
        """Change the rack's management records under the rack's lock (`change(state)`)."""
        from simulator.rack import Rack  # the rack imports the workload: only here

        with Rack.open(self.root) as rack:
            change(rack.root, rack.state)

    # -- listening -------------------------------------------------------------------------

    def start(self) -> None:
        self._record(access.ensure)
        self._sync()
        self._watcher = threading.Thread(target=self._watch, name="arrays-api-watch", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        self._stop.set()
        if self._watcher:
            self._watcher.join()
        for key in list(self._listeners):
            self._close(key)

    def endpoints(self) -> dict[tuple[str, str], int]:
        """(array, controller): the port it listens on now."""
        return {key: listener.server_address[1] for key, (listener, _t) in self._listeners.items()}

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_SECONDS):
            try:
                self._sync()
            except OSError:
                continue  # the rack is being rewritten: next time

    def _sync(self) -> None:
        state = self.state()
        if any(
            not access.complete(self.root, name, a.get("management"))
            for name, a in state["arrays"].items()
        ):
            self._record(access.ensure)
            state = self.state()
        for name, array in state["arrays"].items():
            for controller, status in array["controllers"].items():
                key = (name, controller)
                # A failed controller, or one whose management port is down, does not answer.
                answers = status == "optimal" and controller not in array.get("ports_down", [])
                if answers and key not in self._listeners:
                    self._open(array, controller)
                elif not answers and key in self._listeners:
                    self._close(key)
        for key in [k for k in self._listeners if k[0] not in state["arrays"]]:
            self._close(key)

    def _context(self, array: str, controller: str) -> ssl.SSLContext:
        """The controller's own certificate and key."""
        key = (array, controller)
        if key not in self._contexts:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(
                access.certificate_path(self.root, array, controller),
                access.key_path(self.root, array, controller),
            )
            self._contexts[key] = context
        return self._contexts[key]

    def _open(self, array: dict, controller: str) -> None:
        name = array["name"]
        port = array["management"]["controllers"][controller]["port"]
        context = self._context(name, controller)
        secret = access.password(self.root, name)
        try:
            listener = _Listener(self, name, controller, port, context, secret)
        except OSError:
            # Its port was taken while the rack was not serving: take another, record it.
            listener = _Listener(self, name, controller, 0, context, secret)
            chosen = listener.server_address[1]

            def move(_root, state):
                state["arrays"][name]["management"]["controllers"][controller]["port"] = chosen

            self._record(move)
        thread = threading.Thread(
            target=listener.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"arrays-api-{name}-{controller}",
            daemon=True,
        )
        thread.start()
        self._listeners[(name, controller)] = (listener, thread)

    def _close(self, key: tuple[str, str]) -> None:
        listener, thread = self._listeners.pop(key)
        listener.shutdown()
        listener.server_close()
        thread.join()
