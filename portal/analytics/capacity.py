"""The capacity forecast of the analytics (DESIGN.md §9): per OST and for the whole filesystem,
the fill trend of a window's ``ost`` points and when it reaches the capacity thresholds. Plain
maths on the points ``portal.analytics.maths`` groups."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from metrics import quantities
from portal.analytics.maths import SECONDS_PER_DAY, Point, by_series, target_label


def linear_fit(samples: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares slope and intercept of (time, value) samples; None for fewer than two
    distinct times."""
    if len({t for t, _ in samples}) < 2:
        return None
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_v = sum(v for _, v in samples) / n
    covariance = sum((t - mean_t) * (v - mean_v) for t, v in samples)
    variance = sum((t - mean_t) ** 2 for t, _ in samples)
    slope = covariance / variance
    return slope, mean_v - slope * mean_t


def reaches(
    samples: list[tuple[float, float]], level: float, now: float, horizon_days: float = 365
) -> float | None:
    """When the fitted trend reaches ``level`` (epoch seconds): now if it is there already,
    None when it is not growing or would take longer than the horizon."""
    fit = linear_fit(samples)
    if fit is None:
        return None
    slope, intercept = fit
    current = slope * now + intercept
    if current >= level:
        return now
    if slope <= 0:
        return None
    when = (level - intercept) / slope
    return when if when - now <= horizon_days * SECONDS_PER_DAY else None


def capacity_forecast(
    points: Iterable[Point], warning: float, critical: float, now: float | None = None
) -> dict:
    """Per OST and for the whole filesystem: the fill trend (points per day) and when it
    reaches the warning and critical capacity thresholds, or None: not within a year."""
    per_ost: dict[str, list[tuple[float, float]]] = defaultdict(list)
    totals: dict[float, list[float]] = defaultdict(lambda: [0.0, 0.0])  # time -> used, available
    latest = 0.0
    for tags, members in by_series(points, "ost").items():
        tag = dict(tags)
        label = target_label(tag.get("fs", ""), tag.get("target", ""))
        for point in members:
            fill = quantities.fields_fill_percent(point.fields)
            if fill is None:
                continue
            per_ost[label].append((point.time, fill))
            used, available = quantities.ost_used_and_available(
                point.fields["kbytes_total"],
                point.fields["kbytes_free"],
                point.fields.get("kbytes_avail"),
            )
            totals[point.time][0] += used
            totals[point.time][1] += available
            latest = max(latest, point.time)
    now = latest if now is None else now

    def forecast(samples: list[tuple[float, float]]) -> dict:
        fit = linear_fit(samples)
        return {
            "fill_percent": round(samples[-1][1], 2) if samples else None,
            "points_per_day": (round(fit[0] * SECONDS_PER_DAY, 3) or 0.0) if fit else None,
            "warning_at": reaches(samples, warning, now),
            "critical_at": reaches(samples, critical, now),
        }

    osts = {label: forecast(sorted(samples)) for label, samples in sorted(per_ost.items())}
    # Only rounds in which every OST reported count for the whole filesystem.
    complete = len(per_ost)
    counts: dict[float, int] = defaultdict(int)
    for samples in per_ost.values():
        for t, _ in samples:
            counts[t] += 1
    whole = sorted(
        (t, fill)
        for t, (used, available) in totals.items()
        if counts[t] == complete and (fill := quantities.fill_percent(used, available)) is not None
    )
    return {
        "warning_percent": warning,
        "critical_percent": critical,
        "filesystem": forecast(whole),
        "osts": osts,
    }
