"""The on-disk spool: batches that InfluxDB did not take yet, kept across restarts.

One file per batch, named by sequence number and point count (`000000000042-5000.lp.gz`),
holding the gzip body exactly as it is posted, so a replay re-sends the same bytes. Files are
written to a temporary name, fsync'd and renamed, and the directory is fsync'd, so a crash
leaves either the whole batch or nothing. The spool is bounded by bytes and by batch count;
when full, the oldest batches go first and their points are counted as dropped.

The running totals of dropped points (spool overflow) and rejected points (batches InfluxDB
refused for good) live in `counters.json` next to the batches, so they stay cumulative over
restarts like every other counter the sensor reports.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections import deque
from typing import NamedTuple

log = logging.getLogger("sensors.spool")

SUFFIX = ".lp.gz"
COUNTERS_FILE = "counters.json"
LOCK_FILE = ".lock"


class SpoolError(RuntimeError):
    """The spool directory cannot be used (e.g. another sensor holds it)."""


class SpooledBatch(NamedTuple):
    sequence: int
    points: int
    size: int
    path: str


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Spool:
    def __init__(self, directory: str, max_bytes: int, max_batches: int) -> None:
        self.directory = os.path.abspath(directory)
        self.max_bytes = max_bytes
        self.max_batches = max_batches
        os.makedirs(self.directory, exist_ok=True)
        self._lock = open(os.path.join(self.directory, LOCK_FILE), "a")  # noqa: SIM115
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise SpoolError(f"{self.directory} is in use by another sensor") from None
        self._batches: deque[SpooledBatch] = deque()
        self.bytes = 0
        self.points = 0
        found = []
        for name in os.listdir(self.directory):
            if name.startswith(".tmp-"):
                os.unlink(os.path.join(self.directory, name))  # a write cut short by a crash
                continue
            batch = self._parse_name(name)
            if batch is not None:
                found.append(batch)
        for batch in sorted(found):
            self._append(batch)
        self.next_sequence = max((batch.sequence for batch in found), default=0) + 1
        self.dropped_points = 0
        self.rejected_points = 0
        self._load_counters()

    def close(self) -> None:
        self._lock.close()

    def __len__(self) -> int:
        return len(self._batches)

    def _parse_name(self, name: str) -> SpooledBatch | None:
        if not name.endswith(SUFFIX):
            return None
        sequence, _, points = name[: -len(SUFFIX)].partition("-")
        if not (sequence.isdigit() and points.isdigit()):
            return None
        path = os.path.join(self.directory, name)
        return SpooledBatch(int(sequence), int(points), os.path.getsize(path), path)

    def _append(self, batch: SpooledBatch) -> None:
        self._batches.append(batch)
        self.bytes += batch.size
        self.points += batch.points

    def push(self, body: bytes, points: int) -> int:
        """Keep one batch (a gzip body). Returns the points dropped to make room."""
        sequence = self.next_sequence
        self.next_sequence += 1
        name = f"{sequence:012d}-{points}{SUFFIX}"
        final = os.path.join(self.directory, name)
        tmp = os.path.join(self.directory, f".tmp-{name}")
        with open(tmp, "wb") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, final)
        _fsync_dir(self.directory)
        self._append(SpooledBatch(sequence, points, len(body), final))
        dropped = 0
        while self._batches and (
            len(self._batches) > self.max_batches or self.bytes > self.max_bytes
        ):
            oldest = self._batches[0]
            self.remove(oldest)
            dropped += oldest.points
        if dropped:
            log.warning("spool full: dropped the oldest %d points", dropped)
            self.count_dropped(dropped)
        return dropped

    def oldest(self) -> SpooledBatch | None:
        return self._batches[0] if self._batches else None

    def read(self, batch: SpooledBatch) -> bytes:
        with open(batch.path, "rb") as handle:
            return handle.read()

    def remove(self, batch: SpooledBatch) -> None:
        self._batches.remove(batch)
        self.bytes -= batch.size
        self.points -= batch.points
        try:
            os.unlink(batch.path)
        except FileNotFoundError:
            pass

    def count_dropped(self, points: int) -> None:
        self.dropped_points += points
        self._save_counters()

    def count_rejected(self, points: int) -> None:
        self.rejected_points += points
        self._save_counters()

    def _load_counters(self) -> None:
        try:
            with open(os.path.join(self.directory, COUNTERS_FILE), encoding="utf-8") as handle:
                counters = json.load(handle)
            self.dropped_points = int(counters.get("dropped_points", 0))
            self.rejected_points = int(counters.get("rejected_points", 0))
        except FileNotFoundError:
            pass
        except (ValueError, TypeError, AttributeError) as error:
            log.warning("ignoring unreadable %s: %s", COUNTERS_FILE, error)

    def _save_counters(self) -> None:
        path = os.path.join(self.directory, COUNTERS_FILE)
        tmp = os.path.join(self.directory, f".tmp-{COUNTERS_FILE}")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(
                {"dropped_points": self.dropped_points, "rejected_points": self.rejected_points},
                handle,
            )
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
