"""The portal's InfluxDB: ``metrics.influx`` bound to the settings (``INFLUXDB_*``), for every
app that reads or writes metrics (a package of its own, below the apps: the surveys read it as
well as health, alerts and analytics).

Every call notes whether InfluxDB answered in a small file of the run directory, shared by the
portal's and the workers' processes (neither Redis nor the database need be up for it), so a
page can say "metrics unavailable since …" without asking InfluxDB itself.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.utils import timezone
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError

from metrics import influx as plain
from metrics.influx import InfluxError, SnapshotError

__all__ = ["InfluxError", "SnapshotError"]  # what callers catch, under the names they know
P = ParamSpec("P")
T = TypeVar("T")


def connection() -> plain.Connection:
    """The settings' InfluxDB, read at each call (tests and the restore change them)."""
    return plain.Connection(
        url=settings.INFLUXDB_URL,
        database=settings.INFLUXDB_DATABASE,
        username=settings.INFLUXDB_USERNAME,
        password=settings.INFLUXDB_PASSWORD,
        timeout=settings.INFLUXDB_TIMEOUT_SECONDS,
        backup_address=settings.INFLUXDB_BACKUP_ADDRESS,
    )


def _outage_file() -> Path:
    return settings.RUN_DIR / "influxdb-unreachable-since"


def unavailable_since() -> datetime | None:
    """When InfluxDB last stopped answering the portal or a worker; None while it answers."""
    try:
        return datetime.fromisoformat(_outage_file().read_text().strip())
    except (OSError, ValueError):
        return None


def unavailable_message(error: Exception | None = None) -> str:
    """The sentence pages, chart data and the API show when metrics cannot be read: since when
    InfluxDB does not answer, or what it said when it refused a query (``error``)."""
    since = unavailable_since()
    if since is None:
        return f"Metrics could not be read: InfluxDB said {error}." if error else ""
    when = timezone.localtime(since).strftime("%Y-%m-%d %H:%M:%S %Z")
    return f"Metrics unavailable since {when}: InfluxDB does not answer."


def _noting_outages(call: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(call)
    def noted(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            answer = call(*args, **kwargs)
        except plain.UNREACHABLE:
            try:  # the first process to see the outage writes its time; the others keep it
                with _outage_file().open("x") as record:
                    record.write(timezone.now().isoformat())
            except OSError:
                pass
            raise
        except InfluxDBClientError:
            _answered()
            raise
        _answered()
        return answer

    return noted


def _answered() -> None:
    try:
        os.unlink(_outage_file())
    except OSError:  # mostly: not there, InfluxDB was answering already
        pass


def client() -> InfluxDBClient:
    return plain.client(connection())


@_noting_outages
def ping() -> str:
    """Return the server's version; raise one of ``InfluxError`` when it does not answer."""
    return plain.ping(connection())


@_noting_outages
def ensure_database() -> None:
    plain.ensure_database(connection())


@_noting_outages
def write_lines(lines: list[str], precision: str = "s") -> None:
    plain.write_lines(connection(), lines, precision)


@_noting_outages
def query(influxql: str, bind_params: dict | None = None) -> list[dict]:
    """Run one InfluxQL statement; return its points as dicts (with ``time`` and tags)."""
    return plain.query(connection(), influxql, bind_params)


@_noting_outages
def query_tagged(statements: list[str], epoch: str = "ms") -> list[list[dict]]:
    """``metrics.influx.query_tagged``: several statements in one request, tags merged in."""
    return plain.query_tagged(connection(), statements, epoch)


def query_tagged_at_once(batches: list[list[str]], epoch: str = "ms") -> list[list[list[dict]]]:
    """``query_tagged`` of several batches of statements, as that many requests at the same
    time (``metrics.influx.side_by_side``)."""
    return plain.side_by_side(query_tagged, [(batch, epoch) for batch in batches])


@_noting_outages
def retention_policies() -> list[str]:
    return plain.retention_policies(connection())


def database_exists(database: str) -> bool:
    return plain.database_exists(connection(), database)


def snapshot(directory: Path, timeout: int = 3600) -> None:
    """A portable snapshot (``influxd backup -portable``) of the portal's database."""
    try:
        ping()
    except InfluxError as error:
        raise SnapshotError(
            f"InfluxDB at {settings.INFLUXDB_URL} does not answer: {error}"
        ) from None
    plain.snapshot(connection(), directory, timeout)


def restore_snapshot(directory: Path, snapshot_database: str, timeout: int = 3600) -> None:
    """Restore a portable snapshot as the portal's database, which must not exist yet."""
    plain.restore_snapshot(connection(), directory, snapshot_database, timeout)
