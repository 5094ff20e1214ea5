"""The retention policies of the metrics and the continuous queries that fill the downsampled
ones (``manage.py influxdb_setup``). In the downsampled policies a field ``x`` is ``mean_x``
(the continuous queries keep the mean of every field of every measurement but the events:
``sensors.schema.EVENTS`` stay raw)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from metrics.influxql.common import (
    HOUR_POLICY,
    MINUTE_POLICY,
    RAW_POLICY,
    quote_identifier,
)
from sensors import schema

CQ_PREFIX = "ostara_"


@dataclass(frozen=True)
class RetentionPolicy:
    name: str
    duration: str
    shard_duration: str
    default: bool = False


@dataclass(frozen=True)
class Downsample:
    name: str  # continuous query name, versioned
    into: str  # retention policy written
    every: str  # GROUP BY time(...)
    resample_for: str  # window recomputed at each run


RETENTION_POLICIES = (
    RetentionPolicy(RAW_POLICY, "7d", "1d", default=True),
    RetentionPolicy(MINUTE_POLICY, "90d", "7d"),
    RetentionPolicy(HOUR_POLICY, "1095d", "30d"),
)
# The measurements the continuous queries read (v1 read every one, the events too). Their
# names end with a digest of the list: a measurement added to the schema replaces them
# (``influxdb_setup`` drops a query of ours whose name it does not want).
DOWNSAMPLED = sorted(set(schema.MEASUREMENTS) - {event.name for event in schema.EVENTS})
_READS = hashlib.sha256("|".join(DOWNSAMPLED).encode()).hexdigest()[:6]
DOWNSAMPLES = (
    Downsample(f"{CQ_PREFIX}minute_v2_{_READS}", MINUTE_POLICY, "1m", "10m"),
    Downsample(f"{CQ_PREFIX}hour_v2_{_READS}", HOUR_POLICY, "1h", "2h"),
)


def show_retention_policies(database: str) -> str:
    return f"SHOW RETENTION POLICIES ON {quote_identifier(database)}"


def retention_policy_statement(verb: str, database: str, policy: RetentionPolicy) -> str:
    """``CREATE`` or ``ALTER`` the policy as wanted."""
    return (
        f"{verb} RETENTION POLICY {quote_identifier(policy.name)} ON {quote_identifier(database)} "
        f"DURATION {policy.duration} REPLICATION 1 SHARD DURATION {policy.shard_duration}"
        + (" DEFAULT" if policy.default else "")
    )


SHOW_CONTINUOUS_QUERIES = "SHOW CONTINUOUS QUERIES"


def drop_continuous_query(database: str, name: str) -> str:
    return f"DROP CONTINUOUS QUERY {quote_identifier(name)} ON {quote_identifier(database)}"


def downsample_select(database: str, downsample: Downsample, where: str = "") -> str:
    db = quote_identifier(database)
    return (
        f"SELECT mean(*) INTO {db}.{quote_identifier(downsample.into)}.:MEASUREMENT "
        f"FROM {db}.{quote_identifier(RAW_POLICY)}./^({'|'.join(DOWNSAMPLED)})$/ {where}"
        f"GROUP BY time({downsample.every}), *"
    )


def backfill_select(database: str, downsample: Downsample, hours: int) -> str:
    return downsample_select(database, downsample, f"WHERE time > now() - {int(hours)}h ")


def create_continuous_query(database: str, downsample: Downsample) -> str:
    return (
        f"CREATE CONTINUOUS QUERY {quote_identifier(downsample.name)} "
        f"ON {quote_identifier(database)} "
        f"RESAMPLE EVERY {downsample.every} FOR {downsample.resample_for} "
        f"BEGIN {downsample_select(database, downsample)} END"
    )
