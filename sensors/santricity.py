"""The arrays through their controllers' SANtricity REST API (the `santricity` collector).

One collector on the management server watches every array, once per `[santricity] interval`
(60 s), as E-series sites run NetApp's E-Series Performance Analyzer. Per array and round it
asks controller A over HTTPS; when A does not answer (connection refused, timeout, a TLS
failure, HTTP 5xx) it asks B, and writes one `array_management` point per controller asked
(`answered` 1/0, `seconds`), so a controller that does not answer is named.

TLS is verified one of two ways (`[santricity.<array>]`):
- `fingerprints`: each controller's own certificate, pinned at provisioning (an E-series
  controller makes its own self-signed one). The connection is made without a CA, then the
  peer's certificate (SHA-256 of its DER form) is compared with *that controller's* pin before
  any credential is sent: controller A must present A's certificate, B B's. A mismatch is
  refused with both fingerprints in the message; a controller not pinned yet is not asked.
- `ca_file`: a CA the site gives; normal verification, the address's host name checked.

Each array has its own read-only monitor account (`user`, `password_file` of its section, by
default those of `[santricity]`).

What one answer gives (paths, JSON fields and units as NetApp's SANtricity Web Services
models and the E-Series Performance Analyzer collectors use them; sensors/README.md, "Arrays"):
- `array`: drives, volume groups and controllers with the state words, ids and ok/not ok of
  the SMcli collector (sensors.arrays), so the health engine reads either unchanged; a volume
  group's reconstruction or copyback with its percent.
- `array_volume`, `array_drive`, `array_controller`, `array_interface`: the array's own
  analysed statistics (IOPS, MB/s, ms, percent).
- `array_event`: the Major Event Log entries after the last sequence number seen (kept over
  restarts in the spool directory); the first run takes only the newest `FIRST_EVENTS`. A log
  that no longer holds the last event seen nor any after it was cleared or restarted (a
  controller replaced): it is read again from its start, and the collector's log says so.

Arrays are asked in parallel; each array's conversation has a deadline (`[santricity]
timeout`), so a dead array costs one timeout, never the round.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import logging
import os
import socket
import ssl
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sensors import schema
from sensors.arrays import write_components
from sensors.config import SantricityArray, SensorConfig
from sensors.rounds import Round
from sensors.santricity_model import (
    CONTROLLER_NAMES,
    IDLE_ACTIONS,
    Answers,
    ArrayModel,
)

log = logging.getLogger("sensors.santricity")

# Events taken on the very first run (or after the state file was lost): the newest ones only,
# not an array's whole log of thousands.
FIRST_EVENTS = 100
# Events taken per round at most: a burst beyond it is read over the next rounds.
EVENTS_PER_ROUND = 1000
EVENTS_FILE = "santricity-events.json"
# The MEL holds at most this many entries (SANtricity's bound).
MEL_SIZE = 8192
# The embedded Web Services' own storage system.
SYSTEM = "/devmgr/v2/storage-systems/1"
STATISTICS = ("volume", "drive", "controller", "interface")


class ControllerSilent(Exception):
    """The controller did not answer usefully (refused, timed out, TLS, HTTP 5xx): its partner
    is asked instead."""


class CertificateRefused(ControllerSilent):
    """The controller's certificate is not its pinned one: no credential was sent to it."""


class Refused(Exception):
    """The array answered but refused us (a wrong monitor password, an unknown path): asking
    the partner controller would not help. `reason`: "account" when it was the monitor
    account."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


def fingerprint_of(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()


def tls_context(array: SantricityArray) -> ssl.SSLContext:
    if array.ca_file:
        context = ssl.create_default_context(cafile=array.ca_file)
        context.check_hostname = True
        return context
    # Pinned: the certificate is self-signed; it is checked by its fingerprint after the
    # handshake, before the request (and its Authorization header) is sent.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Conversation:
    """One kept-alive HTTPS connection to one controller, for one round, under a deadline."""

    def __init__(
        self,
        array: SantricityArray,
        controller: str,
        address: tuple[str, int],
        pin: str,
        deadline: float,
    ) -> None:
        self.array = array
        self.controller = controller
        self.host, self.port = address
        # The SHA-256 this controller's certificate must have ("": verified by the CA file).
        self.pin = pin
        self.deadline = deadline
        user, password = array.user, array.password
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        self._headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}
        self._connection: http.client.HTTPSConnection | None = None

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ControllerSilent(f"controller {self.controller}: no answer within the timeout")
        return left

    def connect(self, timeout: float) -> None:
        """Handshake (and, when pinned, the certificate check) within `timeout` seconds."""
        connection = http.client.HTTPSConnection(
            self.host,
            self.port,
            timeout=min(timeout, self._left()),
            context=tls_context(self.array),
        )
        try:
            connection.connect()
        except ssl.SSLError as error:
            connection.close()
            raise ControllerSilent(f"controller {self.controller}: TLS: {error}") from None
        except (OSError, TimeoutError) as error:
            connection.close()
            raise ControllerSilent(f"controller {self.controller}: {_reason(error)}") from None
        if self.pin:
            seen = fingerprint_of(connection.sock.getpeercert(binary_form=True) or b"")
            if seen != self.pin:
                connection.close()
                raise CertificateRefused(
                    f"controller {self.controller} ({self.host}:{self.port}) of array "
                    f"{self.array.name} presents a certificate with SHA-256 fingerprint {seen}, "
                    f"not controller {self.controller}'s pinned {self.pin}: refused, no "
                    "credentials sent"
                )
        # Never reconnected behind our back: a new connection is made here, its certificate
        # checked again before the next request carries the credentials.
        connection.auto_open = 0
        self._connection = connection

    def get(self, path: str, params: dict | None = None) -> Any:
        """The JSON body of one GET; ControllerSilent on timeouts and 5xx."""
        if self._connection is None:
            raise RuntimeError("not connected")
        if self._connection.sock is None:  # the controller closed it (`Connection: close`)
            self._connection.close()
            self.connect(self._left())
        if params:
            path = f"{path}?{urllib.parse.urlencode(params)}"
        connection = self._connection
        try:
            connection.sock.settimeout(self._left())
            connection.request("GET", path, headers=self._headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, TimeoutError, http.client.HTTPException) as error:
            raise ControllerSilent(
                f"controller {self.controller}: GET {path}: {_reason(error)}"
            ) from None
        if response.status >= 500:
            raise ControllerSilent(
                f"controller {self.controller}: GET {path}: HTTP {response.status}"
            )
        if response.status in (401, 403):
            raise Refused(
                f"controller {self.controller} refused the monitor account "
                f"(HTTP {response.status}): check [santricity.{self.array.name}] user and "
                "password_file",
                reason="account",
            )
        if response.status != 200:
            raise Refused(f"controller {self.controller}: GET {path}: HTTP {response.status}")
        try:
            return json.loads(body)
        except ValueError:
            raise ControllerSilent(
                f"controller {self.controller}: GET {path}: the answer is not JSON"
            ) from None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _reason(error: BaseException) -> str:
    if isinstance(error, (TimeoutError, socket.timeout)):
        return "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    return str(error) or type(error).__name__


class EventLog:
    """The last MEL sequence number seen per array, kept in a small file in the spool
    directory so a restart neither repeats nor loses events."""

    def __init__(self, directory: str) -> None:
        self.path = Path(directory) / EVENTS_FILE
        self._lock = threading.Lock()
        try:
            self._last: dict[str, int] = {
                str(k): int(v) for k, v in json.loads(self.path.read_text()).items()
            }
        except FileNotFoundError:
            self._last = {}
        except (OSError, ValueError, AttributeError) as error:
            log.warning("%s: %s (events start again from the newest)", self.path, error)
            self._last = {}

    def last(self, array: str) -> int | None:
        with self._lock:
            return self._last.get(array)

    def saw(self, array: str, sequence: int) -> None:
        """Record `sequence` as the newest seen on `array` (written at once, atomically)."""
        with self._lock:
            if self._last.get(array) == sequence:
                return
            self._last[array] = sequence
            text = json.dumps(self._last, sort_keys=True)
            temporary = self.path.with_suffix(".tmp")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(text)
            os.replace(temporary, self.path)


class SantricityCollector:
    """Every configured array, each asked in its own thread, once per call."""

    def __init__(self, config: SensorConfig, timeout: float | None = None) -> None:
        self.arrays = config.santricity_arrays
        self.timeout = timeout or config.santricity_timeout
        self.events = EventLog(config.spool_dir)
        # Each call asks every array: the sensor's scheduler calls it every [santricity]
        # interval (sensors.collect).
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, min(16, len(self.arrays))), thread_name_prefix="santricity"
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def collect(self, rnd: Round) -> None:
        parts = []
        for array in self.arrays:
            part = Round(rnd.timestamp, rnd.tags)
            parts.append((part, self._pool.submit(self._guarded, part, array)))
        for part, future in parts:
            future.result()
            rnd.lines.extend(part.lines)
            rnd.errors += part.errors

    def _guarded(self, rnd: Round, array: SantricityArray) -> None:
        try:
            self.collect_array(rnd, array)
        except Exception as error:  # a bug on one array's answer must not cost the others
            rnd.problem(f"santricity array {array.name}", error)

    def collect_array(self, rnd: Round, array: SantricityArray) -> None:
        """Ask A, then B if A does not answer; write what the one that answered said."""
        deadline = time.monotonic() + self.timeout
        silences = []
        for index, address in enumerate(array.controllers):
            controller = CONTROLLER_NAMES[index]
            partners_left = len(array.controllers) - index - 1
            # A controller that hangs (on connecting, or answering) leaves its partner its share
            # of the time.
            pin = array.fingerprints[index] if array.fingerprints else ""
            if array.fingerprints and not pin:
                silences.append(
                    f"controller {controller}: its certificate is not pinned yet (the sensor "
                    "step pins it when the controller answers), so it is not asked"
                )
                continue
            started = time.monotonic()
            own = started + (deadline - started) / (1 + partners_left)
            conversation = Conversation(array, controller, address, pin, own)
            try:
                conversation.connect(own - started)
                answers = self.ask(conversation, array)
            except ControllerSilent as error:
                silences.append(str(error))
                refused = "certificate" if isinstance(error, CertificateRefused) else ""
                self._asked(rnd, array, controller, False, started, refused)
                if refused:
                    rnd.problem(f"santricity array {array.name}", str(error))
                continue
            except Refused as error:
                self._asked(rnd, array, controller, False, started, error.reason)
                rnd.problem(f"santricity array {array.name}", str(error))
                return
            finally:
                conversation.close()
            self._asked(rnd, array, controller, True, started)
            self.write(rnd, array, answers)
            return
        rnd.problem(
            f"santricity array {array.name}",
            "no controller answered: " + "; ".join(silences),
        )

    @staticmethod
    def _asked(
        rnd: Round,
        array: SantricityArray,
        controller: str,
        answered: bool,
        started: float,
        refused: str = "",
    ) -> None:
        """One `array_management` point; `refused`: what the controller refused when it did
        answer (`account`: the monitor account; `certificate`: not its pinned one)."""
        fields: dict = {
            "answered": 1 if answered else 0,
            "seconds": round(time.monotonic() - started, 3),
        }
        if refused:
            fields["refused"] = refused
        tags = {schema.ARRAY: array.name, schema.CONTROLLER: controller}
        rnd.add(schema.ARRAY_MANAGEMENT.name, tags, fields)

    def ask(self, conversation: Conversation, array: SantricityArray) -> Answers:
        """Every document of one round, from one controller."""
        answers = Answers()
        get = conversation.get
        inventory = get(f"{SYSTEM}/hardware-inventory")
        answers.inventory = inventory
        answers.pools = get(f"{SYSTEM}/storage-pools")
        answers.volumes = get(f"{SYSTEM}/volumes")
        # Only groups whose volumes say an operation runs are asked for its progress.
        busy = {
            v.get("volumeGroupRef")
            for v in answers.volumes
            if str(v.get("action") or "none") not in IDLE_ACTIONS
        }
        # The state is in: what follows adds to it, and its failure (an older firmware
        # without a document, a controller that stalls) is said without losing the state.
        for pool in answers.pools:
            if pool.get("id") in busy:
                path = f"{SYSTEM}/storage-pools/{pool['id']}/action-progress"
                answers.progress[pool["id"]] = self._extra(answers, get, path) or []
        for kind in STATISTICS:
            found = self._extra(answers, get, f"{SYSTEM}/analysed-{kind}-statistics")
            if found is not None:
                answers.statistics[kind] = found
        last = self.events.last(array.name)
        # The log is bounded (8192 entries): the first time it is read once, the newest kept.
        # Later it is asked from the last event seen, which it still holds: an answer without
        # it or anything after it is a log that started again (cleared, or a controller
        # replaced), its numbers from 1 again, read from its start.
        start, count = (0, MEL_SIZE) if last is None else (last, EVENTS_PER_ROUND + 1)
        mel = f"{SYSTEM}/mel-events"
        events = self._extra(answers, get, mel, {"startSequenceNumber": start, "count": count})
        if events == [] and last:
            answers.events_restarted = True
            events = self._extra(
                answers, get, mel, {"startSequenceNumber": 0, "count": EVENTS_PER_ROUND}
            )
        if events is not None:
            answers.events = events if last is not None else events[-FIRST_EVENTS:]
            answers.events_read = True
        return answers

    @staticmethod
    def _extra(answers: Answers, get, path: str, params: dict | None = None):
        """One document beyond the state; None (and a problem said) when it cannot be had."""
        try:
            return get(path, params)
        except (Refused, ControllerSilent) as error:
            answers.problems.append(str(error))
            return None

    def write(self, rnd: Round, array: SantricityArray, answers: Answers) -> None:
        for problem in answers.problems:
            rnd.problem(f"santricity array {array.name}", problem)
        model = ArrayModel(array.name, answers)
        write_components(rnd, model.components())
        model.add_statistics(rnd)
        if not answers.events_read:
            return  # the events are asked for again from the same place next round
        last = self.events.last(array.name)
        if answers.events_restarted:
            log.warning(
                "array %s: its event log started again (cleared, or a controller replaced): "
                "event %s is gone and nothing follows it; reading the new log from its start "
                "(%d event%s)",
                array.name,
                last,
                len(answers.events),
                "" if len(answers.events) == 1 else "s",
            )
            last = None
        newest = model.add_events(rnd, last)
        if newest is None and last is None:
            newest = 0  # an empty log: every event from now on is new (sequences start at 1)
        if newest is not None:
            try:
                self.events.saw(array.name, newest)
            except OSError as error:
                rnd.problem(f"santricity events file {self.events.path}", error)
