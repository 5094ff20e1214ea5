"""What a rule's condition says of one object at one moment, in plain Python.

Five kinds of condition (DESIGN.md §8):

- a **health** state of an object as the health engine coloured it: red, orange or worse, a
  target on its failover partner, a silent sensor, a degraded volume group, an OST fuller than
  the capacity threshold, a temperature above its threshold, a lost redundant part (a fencing
  level, a BMC, a controller, a SAS path: ``summary["redundancy"]``). "Red" and "orange" read the
  object's own colour (``own_status``), not the colour it took from a child: an OST that fails
  mails once, for the OST, not again for its SSU and its filesystem;
- a **threshold** on a field of the metric schema (``sensors.schema``), its value, its
  per-second rate, or its percentage of another field of the same point, compared with ``>``,
  ``>=``, ``<`` or ``<=``;
- the **absence of data**: a series that sent nothing for ``threshold`` seconds.
- an **owner above N % of a hard limit** (space or files), and an **owner whose growth would
  reach a hard limit within D days** (``threshold`` is N or D; the owners' usage and limits
  come from ``portal.usage``, one event per owner and filesystem).

An object that a job is moving or building (``summary["moving"]``/``["building"]``, set by the
health engine while a failover, failback, maintenance or provisioning job acts on it) meets no
health condition: what the job does to it is expected, not an alarm.

An ``Observation`` is one object's answer in one evaluation, keyed by a fingerprint that stays
the same between evaluations; ``portal.alerts.engine`` turns a run of them into notifications.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from portal.health.choices import NodeKind, Status
from portal.inventory.choices import VolumeGroupState
from portal.web.numbers import format_figure
from sensors import schema

RED, ORANGE, ON_PARTNER, SILENT = "red", "orange", "on_partner", "silent"
VOLUME_GROUP, FULL, HOT = "volume_group", "full", "hot"
REDUNDANCY = "redundancy"
# The kinds of object each health condition can hold for (the others never carry the flag).
HEALTH_KINDS = {
    ON_PARTNER: (NodeKind.TARGET,),
    # An array only when the array collector reads it and it has gone silent for it.
    SILENT: (NodeKind.SERVER, NodeKind.ARRAY),
    VOLUME_GROUP: (NodeKind.TARGET,),
    FULL: (NodeKind.TARGET,),
    HOT: (NodeKind.SERVER,),
    REDUNDANCY: (NodeKind.SERVER, NodeKind.ARRAY, NodeKind.TARGET),
}
# Flags of an object a job acts on; its alerts hold their state while it does.
JOB_FLAGS = ("moving", "building")
COMPARISONS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
# A no-data rule without a threshold calls a series silent after this long (three rounds).
DEFAULT_SILENCE_SECONDS = 30.0


@dataclass(frozen=True)
class Observation:
    """One object's answer to one rule's condition in one evaluation."""

    fingerprint: str  # stable between evaluations: "target:12", "bmc:server=oss01,sensor=..."
    label: str  # the object as people name it
    true: bool
    summary: str = ""  # what holds, in a sentence, when it holds
    object_key: str = ""  # the health object (for silences, scope and the object's page)
    # A job moves or builds the object: its events keep their state (none opens, none resolves).
    held: bool = False


def held_by_job(summary: dict) -> bool:
    """Whether a job is moving or building the object (``summary["moving"]``/``["building"]``)."""
    return any(summary.get(flag) for flag in JOB_FLAGS)


def health_holds(condition: str, status: str, summary: dict) -> bool:
    """Whether an object with this colour and summary (``HealthStatus``) meets the condition."""
    if held_by_job(summary):
        return False
    own = summary.get("own_status", status)
    if condition == RED:
        return own == Status.RED
    if condition == ORANGE:
        return own in (Status.ORANGE, Status.RED)
    if condition == VOLUME_GROUP:
        return summary.get(VOLUME_GROUP, VolumeGroupState.OPTIMAL) != VolumeGroupState.OPTIMAL
    if condition in (ON_PARTNER, SILENT, FULL, HOT, REDUNDANCY):
        return bool(summary.get(condition))
    raise ValueError(f"unknown health condition {condition!r}")


def compare(value: float, comparison: str, threshold: float) -> bool:
    try:
        return COMPARISONS[comparison](value, threshold)
    except KeyError:
        raise ValueError(f"unknown comparison {comparison!r}") from None


def check_field(measurement: str, field: str, percent_of: str = "") -> None:
    """Refuse a field the metric schema does not have (``ValueError`` naming it)."""
    known = schema.MEASUREMENTS.get(measurement)
    if known is None:
        raise ValueError(
            f"no measurement {measurement!r} in the metric schema "
            f"(one of {', '.join(sorted(schema.MEASUREMENTS))})"
        )
    for name in filter(None, (field, percent_of)):
        if name not in known.fields:
            raise ValueError(
                f"measurement {measurement!r} has no field {name!r} "
                f"(its fields: {', '.join(known.fields)})"
            )


def series_fingerprint(measurement: str, tags: dict) -> str:
    """A series' stable name: the measurement and its identity tags, sorted."""
    identity = ",".join(f"{key}={tags[key]}" for key in sorted(tags) if tags[key])
    return f"{measurement}:{identity}"


def series_object(tags: dict) -> tuple[str, str]:
    """(kind, name) of the object a series belongs to, as the health tree names it."""
    if tags.get(schema.TARGET) and tags.get(schema.FS):
        return NodeKind.TARGET, schema.target_label(tags[schema.FS], tags[schema.TARGET])
    for tag, kind in ((schema.ARRAY, NodeKind.ARRAY), (schema.SERVER, NodeKind.SERVER)):
        if tags.get(tag):
            return kind, tags[tag]
    return "", ""


def series_label(measurement: str, tags: dict) -> str:
    """How a person names a series: the object, and the sensor or part where one is tagged."""
    _, name = series_object(tags)
    detail = [tags[tag] for tag in (schema.SENSOR, schema.COMPONENT, schema.ID) if tags.get(tag)]
    if tags.get(schema.TARGET) and tags.get(schema.SERVER):
        detail.append(f"on {tags[schema.SERVER]}")
    return " ".join([name or measurement, *detail])


def describe_threshold(
    field: str, value: float, comparison: str, threshold: float, *, rate: bool, percent_of: str
) -> str:
    """ "kbytes_avail at 4.2 % of kbytes_total (< 5)": the reading and the rule it broke."""
    if percent_of:
        reading = f"{field} at {value:.1f} % of {percent_of}"
    elif rate:
        reading = f"{field} at {value:,.1f}/s"
    else:
        reading = f"{field} at {format_figure(value)}"
    return f"{reading} ({comparison} {format_figure(threshold)})"
