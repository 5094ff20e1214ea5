"""The InfluxDB client: every read and write of the appliance's metrics goes through it.

InfluxDB 1.x speaks HTTP: ``/ping``, ``/write`` with line protocol and ``/query`` with InfluxQL.
The ``influxdb`` 5.3 client handles the query side; writes of pre-encoded line protocol go
through it too, so there is one connection setting and one error type for callers. The
InfluxQL texts themselves are in ``metrics.influxql``.

No Django here: the caller says where InfluxDB is (``Connection``). The portal's binding
(``portal.influxdb``) fills it from its settings and notes outages.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import requests
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError, InfluxDBServerError

InfluxError = (InfluxDBClientError, InfluxDBServerError, requests.RequestException)
# Errors that mean InfluxDB is not there or not well (a refused query is an answer).
UNREACHABLE = (InfluxDBServerError, requests.RequestException)


@dataclass(frozen=True)
class Connection:
    """Where the metrics are: InfluxDB's URL and database, and its backup service
    (``host:port`` of ``influxd backup``) for snapshots."""

    url: str
    database: str
    username: str = ""
    password: str = ""
    timeout: int = 10
    backup_address: str = ""


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


def client(connection: Connection) -> InfluxDBClient:
    return _client(
        connection.url,
        connection.database,
        connection.username,
        connection.password,
        connection.timeout,
    )


def ping(connection: Connection) -> str:
    """Return the server's version; raise one of ``InfluxError`` when it does not answer."""
    return client(connection).ping()


def ensure_database(connection: Connection) -> None:
    client(connection).create_database(connection.database)  # a no-op when it exists


def write_lines(connection: Connection, lines: list[str], precision: str = "s") -> None:
    client(connection).write_points(lines, protocol="line", time_precision=precision)


def query(connection: Connection, influxql: str, bind_params: dict | None = None) -> list[dict]:
    """Run one InfluxQL statement; return its points as dicts (with ``time`` and tags)."""
    result = client(connection).query(influxql, bind_params=bind_params, epoch="s")
    return list(result.get_points())


def query_tagged(
    connection: Connection, statements: list[str], epoch: str = "ms"
) -> list[list[dict]]:
    """Run several InfluxQL statements in one request.

    Returns, for each statement, its points as dicts with the tags of their series merged in
    (``GROUP BY`` results lose their tags in ``get_points``). Times are in ``epoch`` units.
    """
    if not statements:
        return []
    result = client(connection).query(";".join(statements), epoch=epoch)
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


def side_by_side(call: Callable[..., Any], arguments: list[tuple]) -> list[Any]:
    """``call`` once for each tuple of ``arguments``, as that many requests at the same time:
    InfluxDB runs one request's statements one after the other, but requests side by side on
    its cores. Answers in the order of the arguments; the first error is raised."""
    global _pool
    if _pool is None:  # made in the process that uses it (after a worker's fork)
        _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="influx")
    futures = [_pool.submit(call, *each) for each in arguments]
    return [future.result() for future in futures]


def retention_policies(connection: Connection) -> list[str]:
    return [policy["name"] for policy in client(connection).get_list_retention_policies()]


def database_exists(connection: Connection, database: str) -> bool:
    return any(entry["name"] == database for entry in client(connection).get_list_database())


class SnapshotError(RuntimeError):
    """A snapshot of the metrics could not be taken or restored; the message says why."""


def _backup_service_answers(connection: Connection) -> None:
    """``influxd backup`` retries a closed port for ever: check that something listens first."""
    host, _, port = connection.backup_address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except (OSError, ValueError) as error:
        raise SnapshotError(
            f"InfluxDB's backup service at {connection.backup_address} "
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


def snapshot(connection: Connection, directory: Path, timeout: int = 3600) -> None:
    """A portable snapshot (``influxd backup -portable``) of the connection's database."""
    try:
        exists = database_exists(connection, connection.database)
    except InfluxError as error:
        raise SnapshotError(f"InfluxDB at {connection.url} does not answer: {error}") from None
    if not exists:
        raise SnapshotError(f"InfluxDB has no database {connection.database!r}")
    _backup_service_answers(connection)
    _influxd(
        [
            "backup",
            "-portable",
            "-database",
            connection.database,
            "-host",
            connection.backup_address,
            str(directory),
        ],
        timeout,
    )


def restore_snapshot(
    connection: Connection, directory: Path, snapshot_database: str, timeout: int = 3600
) -> None:
    """Restore a portable snapshot as the connection's database, which must not exist yet
    (``influxd restore`` refuses to overwrite one)."""
    _backup_service_answers(connection)
    _influxd(
        [
            "restore",
            "-portable",
            "-host",
            connection.backup_address,
            "-db",
            snapshot_database,
            "-newdb",
            connection.database,
            str(directory),
        ],
        timeout,
    )
