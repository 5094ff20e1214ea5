"""Numbers as the portal writes them for a person: one helper for every page, reason, advice
and report, so the same bytes read the same everywhere.

Sizes are in binary units (KiB, MiB, GiB, TiB, PiB): what ``lfs df -h``, ``lctl`` and the
arrays' tools print, and what a stripe or an I/O size is counted in. Counts have thousands
separators ("11,079,439"). A drive's nameplate ("4 TB drives") is the vendor's decimal label
and is left as sold; capacities computed from it are shown through ``terabytes``.

No Django here: reason texts, plain modules and the template filters
(``portal.web.number_filters``) all call these functions.
"""

from __future__ import annotations

import math

BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
NOTHING = "—"


def _finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def format_bytes(value, digits: int = 1) -> str:
    """``value`` bytes in the largest binary unit that leaves at least 1: "241.8 GiB",
    "64 KiB" (a whole number of its unit has no decimals), "512 B"; "—" for no value."""
    number = _finite(value)
    if number is None:
        return NOTHING
    size = abs(number)
    exponent = 0
    while exponent < len(BINARY_UNITS) - 1 and size >= 1024 ** (exponent + 1):
        exponent += 1
    scaled = size / 1024**exponent
    # 1023.96 KiB would print as "1,024.0 KiB": that is 1.0 MiB.
    if exponent < len(BINARY_UNITS) - 1 and round(scaled, digits) >= 1024:
        exponent += 1
        scaled = size / 1024**exponent
    sign = "-" if number < 0 else ""
    if exponent == 0 or scaled == int(scaled):
        return f"{sign}{int(round(scaled)):,} {BINARY_UNITS[exponent]}"
    return f"{sign}{scaled:,.{digits}f} {BINARY_UNITS[exponent]}"


def format_rate(bytes_per_second, digits: int = 1) -> str:
    """A throughput: "1.2 GiB/s"."""
    text = format_bytes(bytes_per_second, digits)
    return text if text == NOTHING else f"{text}/s"


def format_count(value) -> str:
    """A count of things (I/Os, operations, files): whole, with separators: "11,079,439"."""
    number = _finite(value)
    if number is None:
        return NOTHING
    return f"{int(round(number)):,}"


def format_number(value, digits: int = 1) -> str:
    """A measured figure with ``digits`` decimals and separators: "1,234.5"."""
    number = _finite(value)
    if number is None:
        return NOTHING
    return f"{number:,.{digits}f}"


def format_figure(value) -> str:
    """A reading or a limit of any size, as few digits as it needs: "5,300,000", "4.25",
    "0.5" (Python's ``:g`` writes "5.3e+06")."""
    number = _finite(value)
    if number is None:
        return NOTHING
    if number == int(number) or abs(number) >= 1000:
        return f"{int(round(number)):,}"
    return f"{number:.3g}" if abs(number) < 1 else f"{number:,.2f}".rstrip("0").rstrip(".")


def format_terabytes(value, digits: int = 1) -> str:
    """A capacity given in decimal terabytes (drive nameplates times drives), in binary units
    like every other size: 480 TB is "436.6 TiB"."""
    number = _finite(value)
    return NOTHING if number is None else format_bytes(number * 1e12, digits)
