"""Which rows of a per-OST or per-OSS bar chart are drawn one by one (issue 17).

A 100-SSU filesystem has 2,400 OSTs and 200 OSSs: as many bars are a grey comb. Up to
``ALL_UP_TO`` rows (two SSUs' OSTs) a chart draws every row, as it always did; beyond, the
``SHOWN`` top rows by what matters (the fullest OSTs, the busiest OSSs) and the rest together,
so the totals still add up. No Django here: the health charts and the analytics use it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

ALL_UP_TO = 48
SHOWN = 16


def top_and_rest(
    rows: list[dict], key: Callable[[dict], float], shown: int = SHOWN, all_up_to: int = ALL_UP_TO
) -> tuple[list[dict], list[dict]]:
    """Every row (in its order) and nothing else when there are few; otherwise the ``shown``
    highest by ``key``, highest first, and the others in their order."""
    if len(rows) <= all_up_to:
        return rows, []
    ranked = sorted(range(len(rows)), key=lambda index: -key(rows[index]))
    top = set(ranked[:shown])
    return [rows[index] for index in ranked[:shown]], [
        row for index, row in enumerate(rows) if index not in top
    ]


def spread(values: list[float]) -> dict:
    """Least, median and greatest of the values (all None when there are none)."""
    if not values:
        return {"min": None, "median": None, "max": None}
    return {
        "min": min(values),
        "median": round(statistics.median(values), 2),
        "max": max(values),
    }


def others_label(count: int) -> str:
    return f"{count:,} others"


def top_bars(rows: list[dict], name: str, value: str) -> dict:
    """A bar chart's labels, values and links (each row's ``url``) of rows given as dicts: the
    top rows by ``value`` and, when there are many, one bar for the others' mean."""
    shown, rest = top_and_rest(rows, key=lambda row: row[value])
    chart = {
        "labels": [row[name] for row in shown],
        "values": [row[value] for row in shown],
        "links": [row.get("url") or "" for row in shown],
        "others": len(rest),
    }
    if rest:
        chart["labels"].append(f"{others_label(len(rest))} (mean)")
        chart["values"].append(round(statistics.fmean(row[value] for row in rest), 2))
        chart["links"].append("")
    return chart
