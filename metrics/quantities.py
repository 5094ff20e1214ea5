"""The quantities derived from the sensors' fields, written once: the health rules and facts,
the portal's charts, the analytics, the alert rules (a field as a percentage of another) and the
Grafana panels (``fill_expression``, ``used_percent_expression``) all use these.

An OST's fill is the used share as ``lfs df`` computes it: used / (used + available), where
used is total - free and available is what a user may still write (``kbytes_avail``, less than
free by the space the filesystem reserves); a point without ``kbytes_avail`` counts its free
space as available.
"""

from __future__ import annotations


def available_kb(free: float, avail: float | None) -> float:
    """What a user may still write: ``kbytes_avail``, or the free space when it is not known."""
    return avail if avail is not None else free


def fill_percent(used: float, available: float) -> float | None:
    """Used share in percent of used + available, of one OST or of several together; None when
    there is no space at all."""
    if used + available <= 0:
        return None
    return 100.0 * used / (used + available)


def ost_used_and_available(
    total: float | None, free: float | None, avail: float | None
) -> tuple[float, float] | None:
    """An OST's used and available kB from its capacity fields (``kbytes_total``,
    ``kbytes_free``, ``kbytes_avail``); None when it reported no size."""
    if not total or free is None:
        return None
    return total - free, available_kb(free, avail)


def ost_fill_percent(total: float | None, free: float | None, avail: float | None) -> float | None:
    """An OST's fill from its capacity fields; None when it reported no size."""
    space = ost_used_and_available(total, free, avail)
    return None if space is None else fill_percent(*space)


def fields_fill_percent(fields: dict) -> float | None:
    """``ost_fill_percent`` of a point's fields by their names in the schema."""
    return ost_fill_percent(
        fields.get("kbytes_total"), fields.get("kbytes_free"), fields.get("kbytes_avail")
    )


def fill_expression(used: str, available: str) -> str:
    """The fill in InfluxQL, of two expressions of used and available kB (a selector such as
    ``last("kbytes_avail")`` or a column of a subquery)."""
    return f"100 * {used} / ({used} + {available})"


def percent(part: float, whole: float) -> float | None:
    """``part`` as a percentage of ``whole`` (a share, memory in use); None when the whole is
    zero or unknown."""
    return 100.0 * part / whole if whole else None


def used_percent(total: float | None, available: float | None) -> float | None:
    """The share of a whole that is in use when ``available`` of ``total`` is not (memory)."""
    if not total or available is None:
        return None
    return 100.0 * (total - available) / total


def used_percent_expression(total: str, available: str) -> str:
    """``used_percent`` in InfluxQL."""
    return f"100 * (1 - {available} / {total})"
