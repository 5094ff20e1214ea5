"""What a rule would have done over the last days: its events and mails, before it is saved.

The same engine as the live evaluation (``portal.alerts.engine``) is fed the rule's condition
as it held in the stored history, one observation per object and step: the metrics in
InfluxDB (raw points for a day, the minute policy beyond), or for a health rule the colours
the health engine recorded (``StatusChange``, with the flags the rule reads). Silences and
inhibition are left out: it counts what the rule itself produces.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.utils import timezone

from metrics.influxql import alerts as queries
from metrics.influxql.common import MINUTE_POLICY, Source
from portal import influxdb as influx
from portal.alerts import conditions, engine
from portal.alerts.choices import ConditionKind
from portal.alerts.models import Rule
from portal.alerts.services.evaluation import timing
from portal.alerts.services.observation import HealthIndex, rule_value
from portal.health.choices import Status
from portal.health.models import StatusChange
from sensors import schema

# days -> where the points come from; steps keep a series to at most ~3000 observations.
SOURCES = {
    1: Source(None, 60),
    7: Source(MINUTE_POLICY, 300),
    30: Source(MINUTE_POLICY, 900),
}
SHOWN = 50  # notifications listed; the counts are of all of them


@dataclass
class Backtest:
    days: int
    step: int
    objects: int = 0
    events: int = 0
    mails: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    notifications: list[engine.Notification] = field(default_factory=list)
    error: str = ""

    @property
    def shown(self) -> list[dict]:
        return [
            {"when": datetime.fromtimestamp(n.t, tz=UTC), "object": n.object, "kind": n.kind}
            for n in self.notifications[:SHOWN]
        ]


def backtest(rule: Rule, days: int) -> Backtest:
    source = SOURCES.get(days, SOURCES[1])
    result = Backtest(days, source.step)
    now = timezone.now().timestamp()
    start = now - days * 86400
    if rule.condition in (ConditionKind.QUOTA, ConditionKind.QUOTA_DAYS):
        result.error = "an owner's usage rule has no backtest: its growth is read as it is now"
        return result
    try:
        if rule.condition == ConditionKind.HEALTH:
            timelines = _health_timelines(rule, start)
        else:
            timelines = _metric_timelines(rule, source, days * 86400, now)
    except influx.InfluxError as error:
        result.error = f"the metrics could not be read: {error}"
        return result
    observations = []
    grid = range(int(start // source.step + 1) * source.step, int(now) + 1, source.step)
    for fingerprint, (_, points) in timelines.items():
        times = [t for t, _ in points]
        for t in grid:
            i = bisect.bisect_right(times, t) - 1
            if i >= 0:
                observations.append((t, fingerprint, points[i][1]))
    observations.sort(key=lambda item: item[0])
    notifications = [
        engine.Notification(n.t, timelines[n.object][0], n.kind)
        for n in engine.replay(observations, timing(rule))
    ]
    result.objects = len(timelines)
    result.notifications = notifications
    result.mails = len(notifications)
    for notification in notifications:
        result.by_kind[notification.kind] = result.by_kind.get(notification.kind, 0) + 1
    result.events = result.by_kind.get(engine.FIRING, 0)
    return result


def _metric_timelines(
    rule: Rule, source: Source, seconds: int, now: float
) -> dict[str, tuple[str, list[tuple[float, bool]]]]:
    measurement = schema.MEASUREMENTS[rule.measurement]
    if rule.condition == ConditionKind.NO_DATA:
        statement = queries.alert_count_history_statement(source, measurement, rule.field, seconds)
    else:
        statement = queries.alert_history_statement(
            source, measurement, rule.field, seconds, rule.percent_of, rule.rate
        )
    timelines: dict[str, tuple[str, list[tuple[float, bool]]]] = {}
    silent_after = rule.threshold or conditions.DEFAULT_SILENCE_SECONDS
    last_point: dict[str, float] = {}
    for point in influx.query_tagged([statement], epoch="s")[0]:
        tags = {tag: point.get(tag) or "" for tag in measurement.tags}
        fingerprint = conditions.series_fingerprint(measurement.name, tags)
        label = conditions.series_label(measurement.name, tags)
        t = float(point["time"])
        if rule.condition == ConditionKind.NO_DATA:
            if t + source.step > now:
                continue  # the step still running: its points are not all in yet
            if point.get("value"):
                last_point[fingerprint] = t + source.step  # it reported within this step
                holds = False
            elif fingerprint not in last_point:
                continue  # not born yet
            else:
                holds = t + source.step - last_point[fingerprint] > silent_after
        else:
            value = rule_value(rule, point)
            if value is None:
                continue
            holds = conditions.compare(value, rule.comparison, rule.threshold)
        timelines.setdefault(fingerprint, (label, []))[1].append((t, holds))
    return timelines


def _health_timelines(rule: Rule, start: float) -> dict[str, tuple[str, list[tuple[float, bool]]]]:
    """Each object's condition at each recorded change of colour, from its last change before
    the window on (flags that changed with no change of colour are not in the history)."""
    health = HealthIndex.load()
    kinds = conditions.HEALTH_KINDS.get(rule.health_state)
    changes = StatusChange.objects.order_by("at", "pk").only(
        "key", "kind", "name", "new", "summary", "at"
    )
    if kinds:
        changes = changes.filter(kind__in=kinds)
    before = datetime.fromtimestamp(start, tz=UTC)
    timelines: dict[str, tuple[str, list[tuple[float, bool]]]] = {}
    opening: dict[str, tuple[str, bool]] = {}
    by_key = defaultdict(list)
    for change in changes.filter(at__lte=before):
        opening[change.key] = (change.name, _holds(rule, change))
    for change in changes.filter(at__gt=before):
        by_key[change.key].append(change)
    for key in set(opening) | set(by_key):
        if key in health.by_key and not health.in_scope(rule, key, health.by_key[key].kind):
            continue
        name, holds = opening.get(key, ("", False))
        points = [(start, holds)] if key in opening else []
        for change in by_key.get(key, []):
            name = change.name
            points.append((change.at.timestamp(), _holds(rule, change)))
        if any(h for _, h in points):
            timelines[key] = (name, points)
    return timelines


def _holds(rule: Rule, change: StatusChange) -> bool:
    if change.new == Status.GREY:
        return False
    return conditions.health_holds(rule.health_state, change.new, change.summary or {})
