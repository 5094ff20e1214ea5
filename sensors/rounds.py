"""One collection round: its timestamp, the static tags of this sensor, the lines produced so far
and the problems met. Every collector writes into a Round, so a file that fails to parse is
reported and skipped in one place and never stops the other collectors."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from sensors.layout import read_text
from sensors.lineproto import line, series

log = logging.getLogger("sensors")

# The same broken file is logged at most this often (a round runs every 10 s).
LOG_REPEAT_SECONDS = 600.0
_last_logged: dict[str, float] = {}


def report_problem(where: str, message: str) -> None:
    """Log a problem with one source, at most once per LOG_REPEAT_SECONDS per source."""
    now = time.monotonic()
    last = _last_logged.get(where)
    if last is None or now - last >= LOG_REPEAT_SECONDS:
        _last_logged[where] = now
        log.warning("%s: %s (skipped)", where, message)


class Round:
    """Lines of one collection round, all stamped with the same time (milliseconds)."""

    def __init__(self, timestamp_ms: int, tags: dict[str, str]) -> None:
        self.timestamp = timestamp_ms
        self.tags = dict(tags)
        self.lines: list[str] = []
        self.errors = 0
        self.seconds = 0.0  # how long the collectors took, set at the end of the round
        # The outside collectors' schedule (`bmc_seconds`, `bmc_late`, `bmc_interval`) for
        # the `sensor` point.
        self.schedule: dict[str, float] = {}
        # Counts of the sensor's own for the `sensor` point (`kernel_lines_lost`, ...).
        self.counts: dict[str, int] = {}

    def add(self, measurement: str, tags: dict[str, str], fields: dict[str, Any]) -> None:
        """One point; `tags` are added to this sensor's static tags."""
        self.add_series(series(measurement, {**self.tags, **tags}), fields)

    def add_series(self, prefix: str, fields: dict[str, Any]) -> None:
        self.add_series_at(prefix, fields, self.timestamp)

    def add_series_at(self, prefix: str, fields: dict[str, Any], timestamp: int) -> None:
        """One point at another time than the round's (a value known to hold then)."""
        encoded = line(prefix, fields, timestamp)
        if encoded is not None:
            self.lines.append(encoded)

    def problem(self, where: str, error: BaseException | str) -> None:
        self.errors += 1
        report_problem(where, str(error) if isinstance(error, str) else _describe(error))

    def parse(self, path: str, parser: Callable[[str], Any]) -> Any:
        """Read one file and parse it; on any failure report it and return None."""
        try:
            text = read_text(path)
        except FileNotFoundError:
            return None  # went away between listing and reading (a target unmounted)
        except OSError as error:
            self.problem(path, error)
            return None
        try:
            return parser(text)
        except Exception as error:  # any parser failure skips this file only
            self.problem(path, error)
            return None


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
