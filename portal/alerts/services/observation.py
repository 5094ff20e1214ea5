"""What each rule sees in one round: the colours the health engine just stored, the newest
metrics in InfluxDB, or the owners' usage and limits (``portal.usage``), as one
``conditions.Observation`` per object, series or owner.

Rules often share a reading (the warning and the critical level of one field, a threshold and
its no-data twin): ``Readings`` asks InfluxDB once per distinct statement, all of them in one
request, and works out each series' name once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from django.urls import NoReverseMatch, reverse

from metrics import quantities
from metrics.influxql import alerts as queries
from portal import influxdb as influx
from portal.alerts import conditions
from portal.alerts.choices import ConditionKind, ScopeKind
from portal.alerts.models import Rule
from portal.health.choices import NodeKind, Status
from portal.health.models import HealthStatus
from portal.health.services.evaluation import node_key
from portal.usage import maths as usage_maths
from portal.usage import services as usage
from sensors import schema

log = logging.getLogger(__name__)

METRIC_CONDITIONS = (ConditionKind.THRESHOLD, ConditionKind.NO_DATA)
OWNER_CONDITIONS = (ConditionKind.QUOTA, ConditionKind.QUOTA_DAYS)


class HealthRow(NamedTuple):
    """One object as the health engine coloured it (a ``HealthStatus`` row's fields)."""

    key: str
    kind: str
    name: str
    status: str
    reasons: list
    summary: dict
    parent_key: str


class HealthIndex:
    """The health objects of one round, with their ancestry (object first, filesystem last)."""

    def __init__(self, rows: Iterable[HealthRow]) -> None:
        self.rows = list(rows)  # in the order of the cached rows: kind, then name
        self.by_key = {row.key: row for row in self.rows}
        self.by_name = {(row.kind, row.name): row.key for row in self.rows}
        self._ancestry: dict[str, list[str]] = {}

    @classmethod
    def load(cls) -> HealthIndex:
        """The colours the health engine stored last (for pages, and a round run on its own)."""
        return cls(HealthRow(*row) for row in HealthStatus.objects.values_list(*HealthRow._fields))

    @classmethod
    def of_trees(cls, trees: list) -> HealthIndex:
        """The colours of an evaluation as health hands them over (``EvaluationResult.trees``,
        of ``rules.Node``): what it has just stored, without reading it back. An object found
        twice keeps its first place, as the store keeps it."""
        rows: dict[str, HealthRow] = {}
        for tree in trees:
            for node, parent in tree.walk():
                key = node_key(node)
                if key not in rows:
                    parent_key = node_key(parent) if parent else ""
                    rows[key] = HealthRow(
                        key,
                        node.kind,
                        node.name,
                        node.status,
                        node.reasons,
                        node.summary,
                        parent_key,
                    )
        return cls(sorted(rows.values(), key=lambda row: (row.kind, row.name)))

    def key_of(self, kind: str, name: str) -> str:
        return self.by_name.get((kind, name), "")

    def ancestry(self, key: str) -> list[str]:
        if key not in self._ancestry:
            chain, seen = [], set()
            current = key
            while current and current not in seen and current in self.by_key:
                seen.add(current)
                chain.append(current)
                current = self.by_key[current].parent_key
            self._ancestry[key] = chain
        return self._ancestry[key]

    def in_scope(self, rule: Rule, key: str, kind: str) -> bool:
        if rule.scope == ScopeKind.ALL:
            return True
        if rule.scope == ScopeKind.KIND:
            return kind == rule.scope_value
        wanted = NodeKind.FILESYSTEM if rule.scope == ScopeKind.FILESYSTEM else NodeKind.SSU
        return any(
            self.by_key[k].kind in (wanted, NodeKind.PAIR)
            and self.by_key[k].name == rule.scope_value
            for k in self.ancestry(key)
        )


def object_url(kind: str, name: str) -> str:
    """The portal page of an object, where it has one."""
    names = {
        NodeKind.TARGET: "health:target",
        NodeKind.SERVER: "health:server",
        NodeKind.SSU: "health:ssu",
    }
    if kind not in names or (kind == NodeKind.TARGET and schema.is_mgs_label(name)):
        return ""
    try:
        return reverse(names[kind], args=[name])
    except NoReverseMatch:
        return ""


# --- metric readings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """The newest point of one series, with the names the alert uses for it."""

    fingerprint: str
    label: str
    kind: str  # the health object the series belongs to ("" when none)
    name: str
    point: dict


def statement_of(rule: Rule) -> str:
    measurement = schema.MEASUREMENTS[rule.measurement]
    if rule.condition == ConditionKind.NO_DATA:
        return queries.alert_last_seen_statement(measurement, rule.field)
    return queries.alert_now_statement(measurement, rule.field, rule.percent_of, rule.rate)


class Readings:
    """The metric statements of one round's rules, each read once."""

    def __init__(self, rules: list[Rule]) -> None:
        self._measurement: dict[str, schema.Measurement] = {}
        for rule in rules:
            if rule.condition in METRIC_CONDITIONS:
                self._measurement[statement_of(rule)] = schema.MEASUREMENTS[rule.measurement]
        self._answers: dict[str, list[Reading] | influx.InfluxError] | None = None
        self._owners: dict[str, list[dict]] | None = None

    def owners(self, now: float) -> dict[str, list[dict]]:
        """Every filesystem's owners (``portal.usage``), read once for the round's rules."""
        if self._owners is None:
            self._owners = usage.owners_now(now)
        return self._owners

    def of(self, rule: Rule) -> list[Reading]:
        """The newest point of every series the rule reads; raises ``influx.InfluxError``
        when its statement cannot be read now."""
        if self._answers is None:
            self._answers = self._read_all()
        answer = self._answers[statement_of(rule)]
        if isinstance(answer, influx.InfluxError):
            raise answer
        return answer

    def _read_all(self) -> dict[str, list[Reading] | influx.InfluxError]:
        statements = list(self._measurement)
        try:
            answers = dict(zip(statements, influx.query_tagged(statements, epoch="s"), strict=True))
        except influx.InfluxError:  # one statement spoils the request: ask each alone
            answers = {}
            for statement in statements:
                try:
                    answers[statement] = influx.query_tagged([statement], epoch="s")[0]
                except influx.InfluxError as error:
                    answers[statement] = error
        return {
            statement: points
            if isinstance(points, influx.InfluxError)
            else self._newest(self._measurement[statement], points)
            for statement, points in answers.items()
        }

    @staticmethod
    def _newest(measurement: schema.Measurement, points: list[dict]) -> list[Reading]:
        newest: dict[tuple, dict] = {}
        for point in points:
            series = tuple(point.get(tag) or "" for tag in measurement.tags)
            if series not in newest or point["time"] >= newest[series]["time"]:
                newest[series] = point
        readings = []
        for series, point in newest.items():
            tags = dict(zip(measurement.tags, series, strict=True))
            kind, name = conditions.series_object(tags)
            readings.append(
                Reading(
                    conditions.series_fingerprint(measurement.name, tags),
                    conditions.series_label(measurement.name, tags),
                    kind,
                    name,
                    point,
                )
            )
        return readings


# --- what each rule observes ------------------------------------------------------------------


def observe_rule(
    rule: Rule, health: HealthIndex, now: float, readings: Readings | None = None
) -> list[tuple[conditions.Observation, str]]:
    """Every object in the rule's scope with the condition's answer, and its kind."""
    if rule.condition == ConditionKind.HEALTH:
        observed = _health_observations(rule, health)
    elif rule.condition in OWNER_CONDITIONS:
        owners = (readings or Readings([rule])).owners(now)
        return list(_owner_observations(rule, now, owners))
    else:
        read = (readings or Readings([rule])).of(rule)
        if rule.condition == ConditionKind.THRESHOLD:
            observed = _threshold_observations(rule, health, read)
        else:
            observed = _no_data_observations(rule, health, now, read)
    return [(obs, kind) for obs, kind in observed if health.in_scope(rule, obs.object_key, kind)]


def _health_observations(rule: Rule, health: HealthIndex):
    kinds = conditions.HEALTH_KINDS.get(rule.health_state)
    for row in health.rows:
        held = conditions.held_by_job(row.summary)  # grey while built, yet not gone
        if (row.status == Status.GREY and not held) or (kinds and row.kind not in kinds):
            continue
        holds = conditions.health_holds(rule.health_state, row.status, row.summary)
        summary = "; ".join(row.reasons[:4]) if holds else ""
        yield (
            conditions.Observation(row.key, row.name, holds, summary, row.key, held),
            row.kind,
        )


def _threshold_observations(rule: Rule, health: HealthIndex, read: list[Reading]):
    for reading in read:
        value = rule_value(rule, reading.point)
        if value is None:
            continue
        holds = conditions.compare(value, rule.comparison, rule.threshold)
        summary = ""
        if holds:
            said = conditions.describe_threshold(
                rule.field,
                value,
                rule.comparison,
                rule.threshold,
                rate=rule.rate,
                percent_of=rule.percent_of,
            )
            summary = f"{reading.label}: {said}"
        yield _observed(reading, holds, summary, health)


def rule_value(rule: Rule, point: dict) -> float | None:
    """The number a threshold rule compares, from a point of its statement."""
    value = point.get("value")
    if value is None or isinstance(value, (str, bool)):
        return None
    if rule.percent_of:
        whole = point.get("whole")
        return quantities.percent(float(value), float(whole)) if whole else None
    return float(value)


def _owner_observations(rule: Rule, now: float, owners: dict):
    """One observation per owner with a hard limit: above ``threshold`` % of it, or reaching
    it within ``threshold`` days at its growth of the last day. The fingerprint is the owner
    on its filesystem: one event per owner, whatever the round. An owner is no object of the
    health tree (its ``object_key`` is empty): each is its own incident, never muted as "told
    already" by another owner of its filesystem; the scope is the owner's filesystem."""
    for fs, rows in owners.items():
        if rule.scope == ScopeKind.FILESYSTEM and fs != rule.scope_value:
            continue
        if rule.scope == ScopeKind.KIND and rule.scope_value != NodeKind.FILESYSTEM:
            continue
        for row in rows:
            if not (row["kbytes_hard"] or row["inodes_hard"]):
                continue
            name = f"{usage.label(row)} on {fs}"
            summary = ""
            if rule.condition == ConditionKind.QUOTA:
                found = usage_maths.limit_percent(row)
                holds = found is not None and found[0] >= rule.threshold
                if holds:
                    summary = f"{name}: {found[0]:.1f} % of its {UNIT_WORDS[found[1]]} limit"
            else:
                found = usage_maths.limit_within(row, now, rule.threshold * 86400)
                holds = found is not None
                if holds:
                    summary = (
                        f"{name}: reaches its {UNIT_WORDS[found[1]]} limit "
                        f"{_day(found[0], now)} at its growth of the last day"
                    )
            fingerprint = f"owner:{fs}:{row['kind']}:{row['id']}"
            yield conditions.Observation(fingerprint, name, holds, summary), NodeKind.FILESYSTEM


UNIT_WORDS = {"kbytes": "space", "inodes": "files"}


def _day(epoch: float, now: float) -> str:
    if epoch <= now:
        return "now"
    return "on " + time.strftime("%Y-%m-%d", time.gmtime(epoch))


def _no_data_observations(rule: Rule, health: HealthIndex, now: float, read: list[Reading]):
    after = rule.threshold or conditions.DEFAULT_SILENCE_SECONDS
    for reading in read:
        seen = reading.point["time"]
        holds = now - seen > after
        summary = (
            f"{reading.label}: no {rule.field} for {int(now - seen)} s (since {_clock(seen)})"
            if holds
            else ""
        )
        yield _observed(reading, holds, summary, health)


def _observed(reading: Reading, holds: bool, summary: str, health: HealthIndex):
    observation = conditions.Observation(
        reading.fingerprint,
        reading.label,
        holds,
        summary,
        health.key_of(reading.kind, reading.name),
    )
    return observation, reading.kind


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))
