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


# --- a survey of several servers, and each OST alone ------------------------------------------


def combine(per_server: dict[str, list[Result]]) -> list[Result]:
    """The lines of the whole survey: the servers' lines of the same record size, objects per
    OST and threads per OST added up (the servers ran at the same time). Figures are summed,
    ``[min, max]`` widened, a flag or an abort on any server is kept."""
    combined: dict[tuple, Result] = {}
    printed_by: dict[tuple, int] = {}
    for host in sorted(per_server):
        for result in per_server[host]:
            if not result.tests or not result.ost:
                continue
            key = (result.rsz_kib, result.obj // result.ost, result.thr // result.ost)
            total = combined.get(key)
            if total is None:
                total = combined[key] = Result(
                    line=result.line, ost=0, sz_kib=0, rsz_kib=result.rsz_kib, obj=0, thr=0
                )
            printed_by[key] = printed_by.get(key, 0) + 1
            total.ost += result.ost
            total.sz_kib += result.sz_kib
            total.obj += result.obj
            total.thr += result.thr
            for test, figures in result.tests.items():
                _add_test(total.tests, test, figures)
    # A combination some server did not print (skipped, or the run stopped) is no total.
    return [total for key, total in combined.items() if printed_by[key] == len(per_server)]


def _add_test(tests: dict[str, dict], test: str, figures: dict) -> None:
    if test not in tests:
        tests[test] = dict(figures)
        return
    total = tests[test]
    total["mb_s"] = round(total["mb_s"] + figures["mb_s"], 2)
    if "flag" in total or "flag" in figures:
        flag = total.get("flag") or figures["flag"]
        tests[test] = {"mb_s": total["mb_s"], "flag": flag}
    else:
        total["min"] = min(total["min"], figures["min"])
        total["max"] = max(total["max"], figures["max"])


def judge_target(
    plan: dict, label: str, results: list[Result], tolerance: float = DEFAULT_TOLERANCE
) -> list[str]:
    """Sentences for one OST surveyed alone: its write and read at the highest thread count
    against the plan's rate per OST; a flag or an abort is a sentence as well."""
    expected = float(plan["expected_bandwidth_mb_s"]["per_ost"])
    reasons = []
    for result in results:
        if result.aborted:
            reasons.append(f"{label} alone: the run stopped: {result.aborted}")
    measured = [r for r in results if r.tests]
    if not measured:
        return reasons or [f"{label} alone: the survey printed no result"]
    top = max(measured, key=lambda r: r.thr)
    for test in JUDGED_TESTS:
        figures = top.tests.get(test)
        if figures is None:
            continue
        if "flag" in figures:
            reasons.append(f"{label} alone: {test} reported {figures['flag']}")
        elif figures["mb_s"] < expected * tolerance:
            reasons.append(
                f"{label} alone: {test} reached {figures['mb_s']:,.1f} MB/s at {top.thr} "
                f"threads, {100 * figures['mb_s'] / expected:.0f} % of the expected "
                f"{expected:,.1f} MB/s per OST"
            )
    return reasons


@dataclass
class SurveyVerdict:
    """A survey of one or more servers of a plan: the whole, each server, each OST alone."""

    total: Verdict
    servers: dict[str, Verdict]
    targets: dict[str, list[str]]

    @property
    def passed(self) -> bool:
        return (
            self.total.passed
            and all(v.passed for v in self.servers.values())
            and not any(self.targets.values())
        )

    @property
    def reasons(self) -> list[str]:
        """Each server's sentences (named), the slow OSTs, then the whole's shortfall if the
        servers alone do not explain it."""
        reasons = [
            f"{host}: {reason}" for host, v in sorted(self.servers.items()) for reason in v.reasons
        ]
        reasons += [reason for label in sorted(self.targets) for reason in self.targets[label]]
        servers_passed = all(v.passed for v in self.servers.values())
        if len(self.servers) > 1 and servers_passed and not self.total.passed:
            flagged = [r for r in self.total.reasons if "reported" not in r and "stopped" not in r]
            reasons += [f"all servers together: {reason}" for reason in flagged]
        return reasons


def judge_survey(
    plan: dict,
    per_server: dict[str, list[Result]],
    per_target: dict[str, list[Result]] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> SurveyVerdict:
    servers = {host: judge(plan, results, tolerance) for host, results in per_server.items()}
    total = judge(plan, combine(per_server), tolerance)
    targets = {
        label: judge_target(plan, label, results, tolerance)
        for label, results in (per_target or {}).items()
    }
    return SurveyVerdict(total, servers, targets)
