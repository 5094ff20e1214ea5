"""Judge an obdfilter-survey run against the planned bandwidth of the targets it drove.

Pass when, at the highest thread count run, the write and read tests reach at least
``tolerance`` (90 % by default) of the expected aggregate, no test shows ERROR or SHORT, and no
line stopped the run. The expected aggregate comes from the plan (``expected_bandwidth_mb_s``):
the plan's total when the survey drove all its OSTs, else the planned rate per OST times the
OSTs driven, capped by the OSS ceiling (one server's worth when they fit on one server). The
survey prints MiB/s; vendors quote the same figures as MB/s, and the planner's model follows
the vendors, so the two are compared as printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from provisioning.survey.parse import Result

JUDGED_TESTS = ("write", "read")
DEFAULT_TOLERANCE = 0.9


@dataclass
class Verdict:
    passed: bool
    reasons: list[str]
    ost: int | None = None
    threads: int | None = None
    expected_mb_s: float | None = None
    measured_mb_s: dict[str, float] = field(default_factory=dict)
    tolerance: float = DEFAULT_TOLERANCE

    def as_json(self) -> dict:
        return {
            "verdict": "pass" if self.passed else "fail",
            "reasons": self.reasons,
            "ost": self.ost,
            "threads": self.threads,
            "expected_mb_s": self.expected_mb_s,
            "measured_mb_s": self.measured_mb_s,
            "tolerance": self.tolerance,
        }


def expected_mb_s(plan: dict, osts: int) -> float:
    """The aggregate the plan expects from a survey of ``osts`` of its OSTs."""
    bandwidth = plan["expected_bandwidth_mb_s"]
    planned = [t for t in plan["targets"] if t.get("kind", "OST") == "OST"]
    if osts >= len(planned):
        return float(bandwidth["total"])
    per_server = max(
        sum(1 for t in planned if t["primary"] == host) for host in bandwidth["per_server"]
    )
    servers = 1 if osts <= per_server else len(bandwidth["per_server"])
    return round(min(osts * bandwidth["per_ost"], servers * bandwidth["oss_ceiling"]), 1)


def judge(plan: dict, results: list[Result], tolerance: float = DEFAULT_TOLERANCE) -> Verdict:
    if not 0 < tolerance <= 1:
        raise ValueError(f"tolerance must be above 0 and at most 1 (got {tolerance})")
    reasons: list[str] = []
    for result in results:
        if result.aborted:
            reasons.append(f"the run stopped at line {result.line}: {result.aborted}")
        for test, figures in result.tests.items():
            if "flag" in figures:
                reasons.append(_flag_reason(test, result, figures))
    measured = [r for r in results if r.tests]
    if not measured:
        reasons.append("the survey has no result line, so nothing was measured")
        return Verdict(False, reasons, tolerance=tolerance)
    threads = max(r.thr for r in measured)
    top = [r for r in measured if r.thr == threads]
    osts = top[0].ost
    expected = expected_mb_s(plan, osts)
    floor = expected * tolerance
    best: dict[str, float] = {}
    for test in JUDGED_TESTS:
        rates = [r.tests[test]["mb_s"] for r in top if test in r.tests]
        if not rates:
            reasons.append(f"{test} did not run at {threads} threads, so it cannot be judged")
            continue
        best[test] = max(rates)
        if best[test] < floor:
            reasons.append(
                f"{test} reached {best[test]:,.1f} MB/s on {osts} OSTs at {threads} threads, "
                f"{100 * best[test] / expected:.0f} % of the expected {expected:,.1f} MB/s "
                f"(at least {100 * tolerance:.0f} %, {floor:,.1f} MB/s, is required)"
            )
    return Verdict(not reasons, reasons, osts, threads, expected, best, tolerance)


def _flag_reason(test: str, result: Result, figures: dict) -> str:
    where = (
        f"{test} at {result.thr} threads ({result.obj} objects, {result.rsz_kib} KiB records, "
        f"line {result.line}) measured {figures['mb_s']:,.1f} MB/s but reported {figures['flag']}"
    )
    if figures["flag"] == "SHORT":
        return where + ": it ran too briefly to sample (use a larger size)"
    return where + ": an OST's test_brw failed (see the survey's .detail file)"
