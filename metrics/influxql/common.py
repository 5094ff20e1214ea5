"""What every InfluxQL text of the appliance shares, on the metric schema of ``sensors.schema``
(DESIGN.md §6): quoting, the retention policies' names and steps, where a range's points are
(``Source``), conditions on the tags and the rate of counters. The texts themselves are in a
module per reader: ``retention`` (``influxdb_setup``), ``charts``, ``facts`` (health),
``alerts``, ``analytics``, ``arrays`` (the arrays' figures beside the servers', their event
log), ``usage`` (the owners' space and limits), ``surveys`` and ``grafana``
(``dashboards``). Texts only: ``metrics.influx`` runs them.

Counters are cumulative, so rates are ``non_negative_derivative`` per series (one target on one
server) summed afterwards: a target that fails over starts a new series and is not counted as a
jump. In the downsampled policies a field ``x`` is ``mean_x`` (the continuous queries keep the
mean of every field)."""

from __future__ import annotations

from dataclasses import dataclass

from sensors import schema

RAW_POLICY = "raw"  # what the sensors write; the database's default, so they name none
MINUTE_POLICY = "minute"
HOUR_POLICY = "hour"
MEAN_PREFIX = "mean_"


# The time step of each policy's points, in seconds (None: the raw points, a sensor round).
POLICY_STEPS: dict[str | None, int] = {None: 10, MINUTE_POLICY: 60, HOUR_POLICY: 3600}


def quote_identifier(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class Source:
    """Where a range's points come from: a retention policy (None = the default, raw) and the
    GROUP BY step in seconds."""

    policy: str | None
    step: int

    def measurement(self, name: str) -> str:
        if self.policy is None:
            return quote_identifier(name)
        return f"{quote_identifier(self.policy)}.{quote_identifier(name)}"

    def field(self, name: str) -> str:
        return quote_identifier(name if self.policy is None else f"{MEAN_PREFIX}{name}")


RAW = Source(None, POLICY_STEPS[None])


def window(seconds: float) -> str:
    return f"time > now() - {int(seconds)}s"


def between(since: float, until: float) -> str:
    return f"time >= {int(since)}s AND time <= {int(until)}s"


def filesystem_condition(name: str) -> str:
    return f"{quote_identifier(schema.FS)} = {quote_string(name)}"


def servers_condition(hostnames: list[str]) -> str:
    if not hostnames:
        return "false"
    server = quote_identifier(schema.SERVER)
    return "(" + " OR ".join(f"{server} = {quote_string(h)}" for h in hostnames) + ")"


def target_condition(label: str) -> str:
    fs, target = schema.split_label(label)
    condition = f"{quote_identifier(schema.TARGET)} = {quote_string(target)}"
    if fs:
        condition = f"{filesystem_condition(fs)} AND {condition}"
    return condition


def tags(names: tuple[str, ...]) -> str:
    return ", ".join(quote_identifier(name) for name in names)


PER_TARGET = (schema.TARGET, schema.SERVER)
PER_SERVER = (schema.SERVER,)


def rate_statement(
    measurement: str,
    fields: dict[str, str],
    where: str,
    *,
    source: Source = RAW,
    inner_window: str,
    outer_window: str,
    step: str,
    per_series: tuple[str, ...] = PER_TARGET,
    by: tuple[str, ...] = (),
    carry: bool = False,
) -> str:
    """Per-second rates of counters, per series first and summed after, in time buckets.

    ``fields`` maps an output column to a counter field; ``by`` keeps one series per value of
    those tags. The inner window reaches a step further back so the first bucket has a rate.
    ``carry``: a series written only when its counters move (``ost_client``) keeps its last
    value over the steps it skipped (a rate of 0 there, and one when it moves again).
    """
    quote = quote_identifier
    inner = ", ".join(
        f"non_negative_derivative(last({source.field(field)}), 1s) AS {quote(name)}"
        for name, field in fields.items()
    )
    outer = ", ".join(f"sum({quote(name)}) AS {quote(name)}" for name in fields)
    grouped = ", ".join((f"time({step})", *(quote(tag) for tag in by)))
    return (
        f"SELECT {outer} FROM (SELECT {inner} FROM {source.measurement(measurement)} "
        f"WHERE {where} AND {inner_window} "
        f"GROUP BY time({step}), {tags(per_series)}{' fill(previous)' if carry else ''}) "
        f"WHERE {outer_window} GROUP BY {grouped} fill(none)"
    )
