"""`manage.py influxdb_setup` against the test InfluxDB: database, retention policies (raw 7 d
default, 1-minute means 90 d, 1-hour means 3 y), the continuous queries that fill them, run
twice without change, repairs what differs, and backfills means after a long outage."""

from __future__ import annotations

import io
import os
import time

import pytest
from django.core.management import CommandError, call_command

from metrics.influxql.retention import DOWNSAMPLES
from portal import influxdb as influx

MINUTE_CQ, HOUR_CQ = (downsample.name for downsample in DOWNSAMPLES)


@pytest.fixture
def database(services, settings, request):
    """A database of its own for each test (the name is only ever used here)."""
    name = f"setup_{request.node.name[:30]}_{os.getpid()}".replace("[", "_").replace("]", "_")
    settings.INFLUXDB_DATABASE = name
    yield name
    influx.query(f'DROP DATABASE "{name}"')


def run_setup(*args: str) -> str:
    out = io.StringIO()
    call_command("influxdb_setup", *args, stdout=out)
    return out.getvalue()


def policies(name: str) -> dict[str, tuple[str, str, bool]]:
    rows = influx.query(f'SHOW RETENTION POLICIES ON "{name}"')
    return {r["name"]: (r["duration"], r["shardGroupDuration"], r["default"]) for r in rows}


def continuous_queries(name: str) -> dict[str, str]:
    return {
        row["name"]: row["query"]
        for row in influx.query("SHOW CONTINUOUS QUERIES")
        if f' ON "{name}" ' in row["query"] or f" ON {name} " in row["query"]
    }


def test_creates_database_policies_and_continuous_queries(database):
    output = run_setup()
    assert database in {row["name"] for row in influx.query("SHOW DATABASES")}
    found = policies(database)
    assert found["raw"] == ("168h0m0s", "24h0m0s", True)
    assert found["minute"] == ("2160h0m0s", "168h0m0s", False)
    assert found["hour"] == ("26280h0m0s", "720h0m0s", False)
    queries = continuous_queries(database)
    assert set(queries) == {MINUTE_CQ, HOUR_CQ}
    minute = queries[MINUTE_CQ]
    assert "RESAMPLE EVERY 1m FOR 10m" in minute
    assert "SELECT mean(*) INTO" in minute and ".minute.:MEASUREMENT" in minute
    assert ".raw./^(array|" in minute and "GROUP BY time(1m), *" in minute
    # The events (kernel lines, the arrays' event logs) are kept raw only.
    assert "kernel_log" not in minute and "array_event" not in minute
    assert "|ost_client|" in minute
    assert "GROUP BY time(1h), *" in queries[HOUR_CQ]
    assert "created retention policy raw (7d)" in output


def test_running_it_again_changes_nothing(database):
    run_setup()
    before = (policies(database), continuous_queries(database))
    output = run_setup()
    assert (policies(database), continuous_queries(database)) == before
    assert "created" not in output and "altered" not in output and "dropped" not in output
    assert output.count("as wanted") == 5


def test_repairs_a_changed_policy_and_replaces_an_old_continuous_query(database):
    run_setup()
    influx.query(f'ALTER RETENTION POLICY "raw" ON "{database}" DURATION 3d')
    influx.query(f'ALTER RETENTION POLICY "minute" ON "{database}" DEFAULT')
    influx.query(
        f'CREATE CONTINUOUS QUERY "ostara_minute_v0" ON "{database}" BEGIN '
        f'SELECT max(*) INTO "{database}"."minute".:MEASUREMENT '
        f'FROM "{database}"."raw"./.*/ GROUP BY time(1m), * END'
    )
    output = run_setup()
    assert policies(database)["raw"] == ("168h0m0s", "24h0m0s", True)
    assert policies(database)["minute"][2] is False
    assert set(continuous_queries(database)) == {MINUTE_CQ, HOUR_CQ}
    assert "dropped continuous query ostara_minute_v0" in output


def test_other_databases_keep_their_continuous_queries(database, settings):
    other = f"{database}_other"
    settings.INFLUXDB_DATABASE = other
    try:
        run_setup()
        settings.INFLUXDB_DATABASE = database
        run_setup()
        assert set(continuous_queries(other)) == {MINUTE_CQ, HOUR_CQ}
    finally:
        influx.query(f'DROP DATABASE "{other}"')


def test_backfill_fills_minute_and_hour_means_from_raw_points(database):
    run_setup()
    minute = int(time.time()) // 60 * 60 - 120  # a whole minute, two minutes ago
    influx.write_lines(
        [
            f"ost,fs=fs1,target=OST0000 write_bytes=100i {minute + 10}",
            f"ost,fs=fs1,target=OST0000 write_bytes=200i {minute + 20}",
            f"ost,fs=fs1,target=OST0000 write_bytes=600i {minute + 30}",
            f"ost,fs=fs1,target=OST0001 write_bytes=7i {minute + 30}",
        ]
    )
    output = run_setup("--backfill-hours", "1")
    assert "recomputed minute over the last 1 h" in output
    rows = influx.query(
        f'SELECT "mean_write_bytes" FROM "{database}"."minute"."ost" '
        f"WHERE \"target\" = 'OST0000' AND time = {minute}s"
    )
    assert [row["mean_write_bytes"] for row in rows] == [300.0]  # (100 + 200 + 600) / 3
    rows = influx.query(f'SELECT "mean_write_bytes", "target" FROM "{database}"."hour"."ost"')
    assert sorted((r["target"], r["mean_write_bytes"]) for r in rows) == [
        ("OST0000", 300.0),
        ("OST0001", 7.0),
    ]


def test_influxdb_not_answering_is_a_clear_error(services, settings):
    settings.INFLUXDB_URL = "http://127.0.0.1:9"
    with pytest.raises(CommandError, match="InfluxDB at http://127.0.0.1:9"):
        run_setup()
