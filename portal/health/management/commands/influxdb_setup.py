"""Create the metrics database, its retention policies and the continuous queries that fill
them (DESIGN §6). Idempotent: run it at every install or upgrade; it changes only what differs.

- `raw`: what the sensors write, kept 7 days; the default policy, so sensors name none.
- `minute`: 1-minute means of every numeric field, kept 90 days.
- `hour`: 1-hour means, kept 3 years.

The continuous queries use `mean(*)`, so in `minute` and `hour` a field `write_bytes` is
called `mean_write_bytes` (string fields such as `recovery_status` are not carried over).
They resample a window behind them (10 min, 2 h) so batches a sensor replays after a short
InfluxDB outage are still averaged; after a longer one, `--backfill-hours N` recomputes the
last N hours. Our continuous queries carry a version in their name: when their text changes,
the name changes, and the old ones are dropped.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from metrics.influxql.retention import (
    CQ_PREFIX,
    DOWNSAMPLES,
    RETENTION_POLICIES,
    SHOW_CONTINUOUS_QUERIES,
    backfill_select,
    create_continuous_query,
    drop_continuous_query,
    retention_policy_statement,
    show_retention_policies,
)
from portal import influxdb as influx

_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_GO_DURATION_RE = re.compile(r"(\d+)(h|m|s)")


def seconds(duration: str) -> int:
    """`7d`, `1095d`, `90d` (ours) or `168h0m0s` (as InfluxDB shows them) in seconds."""
    if duration[-1] in "wd" and duration[:-1].isdigit():
        return int(duration[:-1]) * _UNITS[duration[-1]]
    return sum(int(n) * _UNITS[unit] for n, unit in _GO_DURATION_RE.findall(duration))


def _query_database(query: str) -> str:
    """The database of a continuous query as SHOW CONTINUOUS QUERIES prints it."""
    target = query.split(" ON ", 1)[1].split(" RESAMPLE ", 1)[0].split(" BEGIN ", 1)[0].strip()
    if target.startswith('"') and target.endswith('"'):
        target = target[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return target


def ensure_retention_policies(database: str) -> list[str]:
    existing = {row["name"]: row for row in influx.query(show_retention_policies(database))}
    done = []
    for policy in RETENTION_POLICIES:
        row = existing.get(policy.name)
        if row is None:
            influx.query(retention_policy_statement("CREATE", database, policy))
            done.append(f"created retention policy {policy.name} ({policy.duration})")
            continue
        same = (
            seconds(row["duration"]) == seconds(policy.duration)
            and seconds(row["shardGroupDuration"]) == seconds(policy.shard_duration)
            and bool(row["default"]) == policy.default
        )
        if same:
            done.append(f"retention policy {policy.name} ({policy.duration}) as wanted")
        else:
            influx.query(retention_policy_statement("ALTER", database, policy))
            done.append(f"altered retention policy {policy.name} to {policy.duration}")
    return done


def ensure_continuous_queries(database: str) -> list[str]:
    ours = {
        row["name"]
        for row in influx.query(SHOW_CONTINUOUS_QUERIES)
        if row["name"].startswith(CQ_PREFIX) and _query_database(row["query"]) == database
    }
    wanted = {downsample.name for downsample in DOWNSAMPLES}
    done = []
    for name in sorted(ours - wanted):
        influx.query(drop_continuous_query(database, name))
        done.append(f"dropped continuous query {name} (replaced)")
    for downsample in DOWNSAMPLES:
        if downsample.name in ours:
            done.append(f"continuous query {downsample.name} as wanted")
        else:
            influx.query(create_continuous_query(database, downsample))
            done.append(
                f"created continuous query {downsample.name} "
                f"({downsample.every} means into {downsample.into})"
            )
    return done


def backfill(database: str, hours: int) -> list[str]:
    """Recompute the downsampled policies over the last `hours` (after a long outage)."""
    done = []
    for downsample in DOWNSAMPLES:
        influx.query(backfill_select(database, downsample, hours))
        done.append(f"recomputed {downsample.into} over the last {hours} h")
    return done


class Command(BaseCommand):
    help = "Create or update the InfluxDB database, retention policies and continuous queries."

    def add_arguments(self, parser):
        parser.add_argument(
            "--backfill-hours",
            type=int,
            default=0,
            help="also recompute the minute and hour means of the last N hours",
        )

    def handle(self, *args, backfill_hours: int, **options):
        database = settings.INFLUXDB_DATABASE
        try:
            influx.ping()
            influx.ensure_database()
            done = ensure_retention_policies(database)
            done += ensure_continuous_queries(database)
            if backfill_hours > 0:
                done += backfill(database, backfill_hours)
        except influx.InfluxError as error:
            raise CommandError(f"InfluxDB at {settings.INFLUXDB_URL}: {error}") from None
        self.stdout.write(f"database {database} at {settings.INFLUXDB_URL}")
        for line in done:
            self.stdout.write(f"  {line}")
