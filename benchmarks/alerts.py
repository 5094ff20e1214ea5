"""Alert evaluation on the health benchmark's 100-SSU rack: the default rules plus 50 threshold
rules over the metric schema (OST fill and write rate, CPU, memory, LNet, arrays), one round
after a health evaluation, first (every pending event created) and steady. Called by
``benchmarks.health`` with its world; it measures and never fails on a number."""

from __future__ import annotations

import statistics
import time

from benchmarks.common import record, say

# (measurement, field, percent_of, rate, comparison, threshold): ten kinds, five levels each.
THRESHOLD_KINDS = (
    ("ost", "kbytes_avail", "kbytes_total", False, "<", 10.0),
    ("ost", "write_bytes", "", True, ">", 1e9),
    ("ost", "read_bytes", "", True, ">", 1e9),
    ("node", "mem_available_kb", "mem_total_kb", False, "<", 10.0),
    ("node", "load1", "", False, ">", 32.0),
    ("node", "cpu_iowait", "", True, ">", 50.0),
    ("lnet", "drop_count", "", True, ">", 10.0),
    ("lnet", "errors", "", False, ">", 0.0),
    ("array", "ok", "", False, "<", 1.0),
    ("mdt", "kbytes_avail", "kbytes_total", False, "<", 10.0),
)


def stricter(comparison: str, threshold: float, level: int) -> float:
    """The threshold of a kind's ``level``-th rule: each level asks for a worse value than the
    last (a rule mix where most series are healthy, as on a real rack)."""
    if not threshold:
        return threshold
    factor = 1 + level / 10
    return threshold / factor if comparison.startswith("<") else threshold * factor


def install_threshold_rules(count: int = 50) -> None:
    from portal.alerts.models import Rule

    for number in range(count):
        measurement, field, percent_of, rate, comparison, threshold = THRESHOLD_KINDS[
            number % len(THRESHOLD_KINDS)
        ]
        level = number // len(THRESHOLD_KINDS)
        Rule.objects.create(
            name=f"bench {number:02d} {measurement}.{field}",
            condition="threshold",
            measurement=measurement,
            field=field,
            percent_of=percent_of,
            rate=rate,
            comparison=comparison,
            threshold=stricter(comparison, threshold, level),
            for_seconds=60,
            repeat_seconds=3600,
            extra_addresses="ops@example.org",
        )


def bench_alerts(repeat: int, before_round, ssus: int) -> None:
    """``before_round``: fresh points and a health evaluation (its result), as beat runs
    before alerts."""
    from portal.alerts.models import Event, Rule
    from portal.alerts.services.evaluation import evaluate_round
    from portal.alerts.services.observation import HealthIndex

    install_threshold_rules()
    rules = Rule.objects.filter(enabled=True).count()
    say(f"Alert evaluation ({rules} rules: the defaults and 50 thresholds), one round:")
    steady = []
    for label in ["first"] + ["steady"] * repeat:
        evaluated = before_round()
        started = time.perf_counter()
        # As the worker runs it: on the colours the health evaluation hands over.
        result = evaluate_round(health=HealthIndex.of_trees(evaluated.trees))
        seconds = time.perf_counter() - started
        if label == "steady":
            steady.append(seconds)
        say(
            f"  {label:34} {seconds:6.2f} s; {result.observations:,} observations, "
            f"{len(result.transitions)} transitions, {result.deliveries} mails queued, "
            f"{Event.objects.count()} events kept"
        )
    if steady:
        record(f"alert evaluation at {ssus} SSUs, steady, median", statistics.median(steady), "s")
        record(f"alert evaluation at {ssus} SSUs, steady, worst", max(steady), "s")
