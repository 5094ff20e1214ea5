"""Sending line protocol to InfluxDB 1.x over HTTP, in gzip-compressed batches, with the spool
behind it.

A write has three outcomes:
- accepted (204);
- rejected for good (400: a line that does not parse, a field type conflict, points outside the
  retention policy; 413: a body over the server's limit). Sending it again would fail again
  forever, so the batch is logged, its points are counted as rejected, and the sensor moves on.
  InfluxDB reports `dropped=N` in a partial write; only those N points count as rejected;
- failed for now (no connection, timeout, 5xx, 404 before the database exists, 401/403 until
  the credentials are fixed). The batch goes to the spool and is replayed later.

Spooled batches are replayed oldest first, before new batches, within a time budget per round
so a long backlog never delays collection. While anything is left in the spool, new batches
join its end, so InfluxDB always receives batches in collection order. Every point carries
its collection timestamp, so a batch that is sent twice (a timeout after InfluxDB had in fact
written it) overwrites the same points instead of adding to them.
"""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import logging
import re
import ssl
import time
import urllib.parse
from typing import NamedTuple

from sensors.spool import Spool

log = logging.getLogger("sensors.sender")

ACCEPTED, REJECTED, FAILED = "accepted", "rejected", "failed"
GZIP_LEVEL = 1  # line protocol compresses ~10x even at level 1; higher levels cost CPU
_DROPPED_RE = re.compile(r"dropped=(\d+)")


class WriteResult(NamedTuple):
    outcome: str  # ACCEPTED, REJECTED or FAILED
    message: str = ""
    rejected_points: int | None = None  # from `dropped=N` in a partial write


class InfluxWriter:
    """POST /write of one gzip body; never raises for HTTP or network trouble.

    The connection is kept alive from batch to batch, as InfluxDB allows: a new connection
    per batch costs a TCP (and for https a TLS) handshake each time. When InfluxDB has closed
    the idle connection meanwhile, the batch goes once more on a new one. The sensor talks to
    InfluxDB directly, never through an HTTP proxy.
    """

    def __init__(
        self,
        url: str,
        database: str,
        retention_policy: str = "",
        username: str = "",
        password: str = "",
        timeout: float = 10.0,
        precision: str = "ms",
    ) -> None:
        query = {"db": database, "precision": precision}
        if retention_policy:
            query["rp"] = retention_policy
        parts = urllib.parse.urlsplit(url)
        self.https = parts.scheme == "https"
        self.netloc = parts.netloc
        self.path = f"{parts.path.rstrip('/')}/write?{urllib.parse.urlencode(query)}"
        self.timeout = timeout
        self.headers = {
            "Content-Type": "text/plain; charset=utf-8",
            "Content-Encoding": "gzip",
        }
        if username:
            token = base64.b64encode(f"{username}:{password}".encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"
        self.connection: http.client.HTTPConnection | None = None
        self.connections = 0  # opened so far

    def write(self, body: bytes) -> WriteResult:
        reused = self.connection is not None
        try:
            try:
                status, raw = self._post(body)
            except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
                # RemoteDisconnected is a ConnectionResetError: an idle connection closed.
                self.close()
                if not reused:
                    raise
                status, raw = self._post(body)
        except (http.client.HTTPException, OSError) as error:
            self.close()
            return WriteResult(FAILED, f"{type(error).__name__}: {error}")
        if 200 <= status < 300:
            return WriteResult(ACCEPTED)
        message = _error_message(raw)
        if status in (400, 413):
            # `partial write: ... dropped=N`: the other points were written. Lines that
            # do not parse are not in N; each is named in an `unable to parse` clause.
            match = _DROPPED_RE.search(message)
            dropped = int(match.group(1)) if match else None
            unparsable = message.count("unable to parse")
            if unparsable:
                dropped = (dropped or 0) + unparsable
            return WriteResult(REJECTED, f"HTTP {status}: {message}", dropped)
        return WriteResult(FAILED, f"HTTP {status}: {message}")

    def _post(self, body: bytes) -> tuple[int, bytes]:
        if self.connection is None:
            if self.https:
                context = ssl.create_default_context()
                self.connection = http.client.HTTPSConnection(
                    self.netloc, timeout=self.timeout, context=context
                )
            else:
                self.connection = http.client.HTTPConnection(self.netloc, timeout=self.timeout)
            self.connections += 1
        self.connection.request("POST", self.path, body=body, headers=self.headers)
        response = self.connection.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _error_message(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    try:
        return str(json.loads(text).get("error", text)).strip()
    except (ValueError, AttributeError):
        return text.strip()[:500]


def encode_batches(lines: list[str], batch_size: int) -> list[tuple[bytes, int]]:
    """Split lines into gzip bodies of at most `batch_size` points each."""
    batches = []
    for start in range(0, len(lines), batch_size):
        chunk = lines[start : start + batch_size]
        text = "\n".join(chunk) + "\n"
        batches.append((gzip.compress(text.encode("utf-8"), compresslevel=GZIP_LEVEL), len(chunk)))
    return batches


class Sender:
    def __init__(self, writer: InfluxWriter, spool: Spool, batch_size: int = 5000) -> None:
        self.writer = writer
        self.spool = spool
        self.batch_size = batch_size
        self.sent_points = 0
        self.reachable: bool | None = None  # for logging changes only; None = not yet known

    def send(self, lines: list[str], replay_seconds: float = 5.0) -> None:
        """Send one round's lines; replay the spool first, spool what cannot go now."""
        batches = encode_batches(lines, self.batch_size)
        open_road = self.replay(time.monotonic() + replay_seconds) if len(self.spool) else True
        for body, points in batches:
            if open_road and not len(self.spool):
                open_road = self._post(body, points)
                if open_road:
                    continue
            self._keep(body, points)

    def _keep(self, body: bytes, points: int) -> None:
        try:
            self.spool.push(body, points)
        except OSError as error:  # a full or broken disk: the batch is lost, and counted
            log.error("cannot spool %d points, dropped: %s", points, error)
            self.spool.dropped_points += points

    def replay(self, deadline: float) -> bool:
        """Send spooled batches, oldest first, until the spool is empty (True), InfluxDB
        fails (False), or the deadline passes (False)."""
        while len(self.spool):
            if time.monotonic() >= deadline:
                return False
            batch = self.spool.oldest()
            try:
                body = self.spool.read(batch)
            except OSError as error:
                log.error("spooled batch %s unreadable, dropped: %s", batch.path, error)
                self.spool.remove(batch)
                self.spool.count_dropped(batch.points)
                continue
            if not self._post(body, batch.points):
                return False
            self.spool.remove(batch)
        return True

    def _post(self, body: bytes, points: int) -> bool:
        """True when the batch is done with (accepted, or rejected for good)."""
        result = self.writer.write(body)
        if result.outcome == ACCEPTED:
            if self.reachable is not True:
                log.info("InfluxDB accepts writes")
            self.reachable = True
            self.sent_points += points
            return True
        if result.outcome == REJECTED:
            self.reachable = True
            rejected = points if result.rejected_points is None else result.rejected_points
            rejected = min(rejected, points)
            self.sent_points += points - rejected
            self.spool.count_rejected(rejected)
            log.error("InfluxDB refused %d of %d points for good: %s", rejected, points, result)
            return True
        if self.reachable is not False:
            log.warning("InfluxDB write failed, spooling: %s", result.message)
        self.reachable = False
        return False
