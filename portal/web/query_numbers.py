"""Numbers read from a URL's query string, for every page and API view that takes one: finite,
within what the reader can use, or ``BadParameter`` naming the parameter (a 400, never a server
error). ``float()`` alone reads "nan", "inf" and "1e308", and NaN compares false with
everything, so a range check written with ``<`` lets it through."""

from __future__ import annotations

import math
import re

# Times as InfluxDB keeps them (nanoseconds in 64 bits end in 2262): from 1970 to 2200.
EARLIEST_TIME = 0
LATEST_TIME = 7_258_118_400

_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")


class BadParameter(ValueError):
    """A query parameter refused; ``field`` names it, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


def number(field: str, text: str, *, low: float, high: float) -> float:
    """``text`` as a finite number from ``low`` to ``high``."""
    try:
        value = float(text.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise BadParameter(field, f"{_shown(text)} is not a number")
    if not low <= value <= high:
        raise BadParameter(field, f"{_shown(text)} is not from {low:g} to {high:g}")
    return value


def whole_number(field: str, text: str, *, low: int, high: int) -> int:
    """``text`` as a whole number (digits only: no "1e3", no "1.0") from ``low`` to ``high``."""
    if not _WHOLE.fullmatch(text.strip()):
        raise BadParameter(field, f"{_shown(text)} is not a whole number")
    value = int(text.strip())
    if not low <= value <= high:
        raise BadParameter(field, f"{value} is not from {low} to {high}")
    return value


def time_in_range(field: str, epoch: float, text: str) -> float:
    """An epoch time within the years InfluxDB can be asked about."""
    if not math.isfinite(epoch) or not EARLIEST_TIME <= epoch <= LATEST_TIME:
        raise BadParameter(field, f"{_shown(text)} is not a time from 1970 to 2200")
    return epoch


def epoch_seconds(field: str, text: str) -> float:
    """Epoch seconds from 1970 to 2200."""
    return time_in_range(field, number(field, text, low=-math.inf, high=math.inf), text)
