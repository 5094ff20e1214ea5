"""What the survey pages draw and tabulate, from a survey's stored result lines.

The load curve is MB/s against threads per OST, one line per test, for the whole survey or one
server: where several record sizes or object counts ran at a thread count, the best is drawn
(the table shows them all). The expected figure is the plan's for the same OSTs.
"""

from __future__ import annotations

from collections import defaultdict

from portal.surveys.choices import TESTS
from portal.surveys.models import Survey, SurveyResult
from provisioning.survey.judge import expected_mb_s


def curve(survey: Survey, server: str = "") -> dict:
    """Chart data for ``health.js``'s "curve": x = threads per OST, a series per test."""
    rows = [r for r in survey.results.all() if r.server == server and not r.target]
    best: dict[str, dict[int, float]] = defaultdict(dict)
    osts = 0
    for row in rows:
        threads = row.threads_per_ost
        best[row.test][threads] = max(best[row.test].get(threads, 0.0), row.mb_s)
        osts = max(osts, row.ost)
    xs = sorted({x for per_test in best.values() for x in per_test})
    tests = [test for test in TESTS if test in best]
    expected = expected_mb_s(survey.pair.plan, osts) if osts else None
    return {
        "x": xs,
        "xlabel": "threads per OST",
        "series": {test: [best[test].get(x) for x in xs] for test in tests},
        "unit": "MB/s",
        "expected": expected,
        "note": (
            f"{osts} OSTs; expected {expected:,.0f} MB/s from the plan"
            if expected
            else "no result line"
        ),
    }


def table(survey: Survey, server: str = "") -> list[dict]:
    """One row per result line (record size, objects, threads), a column per test."""
    lines: dict[tuple, dict] = {}
    for row in survey.results.all():
        if row.server != server or row.target:
            continue
        key = (row.rsz_kib, row.obj, row.thr)
        line = lines.setdefault(
            key,
            {
                "rsz_kib": row.rsz_kib,
                "obj": row.obj,
                "thr": row.thr,
                "ost": row.ost,
                "threads_per_ost": row.threads_per_ost,
                "tests": {},
            },
        )
        line["tests"][row.test] = row
    for line in lines.values():
        line["cells"] = [line["tests"].get(test) for test in survey.tests]
    return [lines[key] for key in sorted(lines)]


def alone(survey: Survey) -> list[dict]:
    """Each OST surveyed alone: its write and read, and whether it fell short."""
    per_ost = survey.pair.plan["expected_bandwidth_mb_s"]["per_ost"]
    floor = per_ost * survey.tolerance
    rows: dict[str, dict] = {}
    for row in survey.results.all():
        if not row.target:
            continue
        entry = rows.setdefault(row.target, {"target": row.target, "server": row.server})
        current = entry.get(row.test)
        if current is None or row.thr >= current.thr:
            entry[row.test] = row
    for entry in rows.values():
        entry["slow"] = any(
            entry.get(test) is not None and (entry[test].flag or entry[test].mb_s < floor)
            for test in ("write", "read")
        )
    return [rows[label] for label in sorted(rows)]


def history_chart(surveys: list[Survey]) -> dict:
    """Write and read at the highest thread count of each finished survey, oldest first, so a
    drift shows; the surveys must be of the same OSTs to compare (the note says so)."""
    done = [s for s in surveys if s.measured_mb_s][::-1]
    return {
        "labels": [f"#{s.pk} {s.created:%Y-%m-%d}" for s in done],
        "series": {
            test: [round(s.measured_mb_s.get(test) or 0) for s in done]
            for test in ("write", "read")
        },
        "unit": "MB/s",
        "note": "write and read of each survey at its highest thread count, oldest first",
    }


def compare(first: Survey, second: Survey) -> list[dict]:
    """The whole-survey lines both surveys ran (same record size, objects and threads per
    OST), with each test's figure in both and the change."""

    def lines(survey: Survey) -> dict[tuple, SurveyResult]:
        return {
            (r.rsz_kib, r.obj // max(1, r.ost), r.threads_per_ost, r.test): r
            for r in survey.results.all()
            if not r.server and not r.target
        }

    ours, theirs = lines(first), lines(second)
    rows = []
    for key in sorted(set(ours) & set(theirs)):
        a, b = ours[key], theirs[key]
        rows.append(
            {
                "rsz_kib": key[0],
                "obj_per_ost": key[1],
                "threads_per_ost": key[2],
                "test": key[3],
                "first": a.mb_s,
                "second": b.mb_s,
                "change_percent": round(100 * (b.mb_s - a.mb_s) / a.mb_s, 1) if a.mb_s else None,
            }
        )
    return rows
