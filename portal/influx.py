"""All of the portal's reads and writes to InfluxDB go through this module.

InfluxDB 1.x speaks HTTP: ``/ping``, ``/write`` with line protocol and ``/query`` with InfluxQL.
The ``influxdb`` 5.3 client handles the query side; writes of pre-encoded line protocol go
through it too, so there is one connection setting and one error type for callers. The
InfluxQL texts themselves are in ``portal.metric_queries``.

Every call notes whether InfluxDB answered in a small file of the run directory, shared by the
portal's and the workers' processes (neither Redis nor the database need be up for it), so a
page can say "metrics unavailable since …" without asking InfluxDB itself.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import ParamSpec, TypeVar

import requests
from django.conf import settings
from django.utils import timezone
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError, InfluxDBServerError

InfluxError = (InfluxDBClientError, InfluxDBServerError, requests.RequestException)
# Errors that mean InfluxDB is not there or not well (a refused query is an answer).
_UNREACHABLE = (InfluxDBServerError, requests.RequestException)
P = ParamSpec("P")
T = TypeVar("T")


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
        except _UNREACHABLE:
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


@lru_cache(maxsize=4)
def _client(url: str, database: str, username: str, password: str, timeout: int) -> InfluxDBClient:
    parsed = requests.utils.urlparse(url)
    return InfluxDBClient(
        host=parsed.hostname or "127.0.0.1",
        port=parsed.port or 8086,
        ssl=parsed.scheme == "https",
        verify_ssl=parsed.scheme == "https",
        username=username or None,
        password=password or None,
        database=database,
        timeout=timeout,
        retries=1,
    )


def client() -> InfluxDBClient:
    return _client(
        settings.INFLUXDB_URL,
        settings.INFLUXDB_DATABASE,
        settings.INFLUXDB_USERNAME,
        settings.INFLUXDB_PASSWORD,
        settings.INFLUXDB_TIMEOUT_SECONDS,
    )


@_noting_outages
def ping() -> str:
    """Return the server's version; raise one of ``InfluxError`` when it does not answer."""
    return client().ping()


@_noting_outages
def ensure_database() -> None:
    client().create_database(settings.INFLUXDB_DATABASE)  # a no-op when it exists


@_noting_outages
def write_lines(lines: list[str], precision: str = "s") -> None:
    client().write_points(lines, protocol="line", time_precision=precision)


@_noting_outages
def query(influxql: str, bind_params: dict | None = None) -> list[dict]:
    """Run one InfluxQL statement; return its points as dicts (with ``time`` and tags)."""
    result = client().query(influxql, bind_params=bind_params, epoch="s")
    return list(result.get_points())


@_noting_outages
def query_tagged(statements: list[str], epoch: str = "ms") -> list[list[dict]]:
    """Run several InfluxQL statements in one request.

    Returns, for each statement, its points as dicts with the tags of their series merged in
    (``GROUP BY`` results lose their tags in ``get_points``). Times are in ``epoch`` units.
    """
    if not statements:
        return []
    result = client().query(";".join(statements), epoch=epoch)
    results = result if isinstance(result, list) else [result]
    answers = []
    for result_set in results:
        points = []
        for series in result_set.raw.get("series", []):
            tags = series.get("tags") or {}
            columns = series["columns"]
            for values in series.get("values", []):
                point = dict(zip(columns, values, strict=False))
                point.update(tags)
                points.append(point)
        answers.append(points)
    return answers


_pool: ThreadPoolExecutor | None = None


def query_tagged_at_once(batches: list[list[str]], epoch: str = "ms") -> list[list[list[dict]]]:
    """``query_tagged`` of several batches of statements, as that many requests at the same
    time: InfluxDB runs one request's statements one after the other, but requests side by
    side on its cores. Answers in the order of the batches; the first error is raised."""
    global _pool
    if _pool is None:  # made in the process that uses it (after a worker's fork)
        _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="influx")
    futures = [_pool.submit(query_tagged, batch, epoch) for batch in batches]
    return [future.result() for future in futures]


@_noting_outages
def retention_policies() -> list[str]:
    return [policy["name"] for policy in client().get_list_retention_policies()]


class SnapshotError(RuntimeError):
    """A snapshot of the metrics could not be taken or restored; the message says why."""


def _backup_service_answers() -> None:
    """``influxd backup`` retries a closed port for ever: check that something listens first."""
    host, _, port = settings.INFLUXDB_BACKUP_ADDRESS.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except (OSError, ValueError) as error:
        raise SnapshotError(
            f"InfluxDB's backup service at {settings.INFLUXDB_BACKUP_ADDRESS} "
            f"(INFLUXDB_BACKUP_ADDRESS) does not answer: {error}"
        ) from None


def _influxd(arguments: list[str], timeout: int) -> None:
    try:
        finished = subprocess.run(
            ["influxd", *arguments], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise SnapshotError(f"influxd {arguments[0]} did not finish in {timeout} s") from None
    except FileNotFoundError:
        raise SnapshotError("influxd is not installed (Debian package influxdb)") from None
    if finished.returncode != 0:
        last = (finished.stderr.strip().splitlines() or ["no output"])[-1]
        raise SnapshotError(f"influxd {arguments[0]} failed: {last}")


def database_exists(database: str) -> bool:
    return any(entry["name"] == database for entry in client().get_list_database())


def snapshot(directory: Path, timeout: int = 3600) -> None:
    """A portable snapshot (``influxd backup -portable``) of the portal's database."""
    try:
        ping()
        exists = database_exists(settings.INFLUXDB_DATABASE)
    except InfluxError as error:
        raise SnapshotError(
            f"InfluxDB at {settings.INFLUXDB_URL} does not answer: {error}"
        ) from None
    if not exists:
        raise SnapshotError(f"InfluxDB has no database {settings.INFLUXDB_DATABASE!r}")
    _backup_service_answers()
    _influxd(
        [
            "backup",
            "-portable",
            "-database",
            settings.INFLUXDB_DATABASE,
            "-host",
            settings.INFLUXDB_BACKUP_ADDRESS,
            str(directory),
        ],
        timeout,
    )


def restore_snapshot(directory: Path, snapshot_database: str, timeout: int = 3600) -> None:
    """Restore a portable snapshot as the portal's database, which must not exist yet
    (``influxd restore`` refuses to overwrite one)."""
    _backup_service_answers()
    _influxd(
        [
            "restore",
            "-portable",
            "-host",
            settings.INFLUXDB_BACKUP_ADDRESS,
            "-db",
            snapshot_database,
            "-newdb",
            settings.INFLUXDB_DATABASE,
            str(directory),
        ],
        timeout,
    )
