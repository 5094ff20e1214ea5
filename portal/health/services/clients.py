"""The clients that moved the most through a target or a server over the last hour, from the
targets' per-export stats: what the target and server pages list as their busiest clients. An
OST's or an OSS's are ranked by bytes, an MDT's or an MDS's by metadata operations."""

from __future__ import annotations

import time
from dataclasses import dataclass

from metrics.influxql.clients import (
    client_operations_statement,
    client_totals_statement,
    operation_count,
)
from portal import influxdb as influx
from sensors import schema

PAGE_SECONDS = 3600
PAGE_LIMIT = 10


@dataclass(frozen=True)
class ClientLoad:
    client: str  # its NID
    read_bytes: float
    write_bytes: float
    operations: float

    @property
    def bytes(self) -> float:
        return self.read_bytes + self.write_bytes


def busiest(
    fs: str, target: str = "", server: str = "", now: float | None = None, metadata=False
) -> list[ClientLoad] | None:
    """The clients of one target (``OST0003``) of ``fs`` or of one server's targets, by bytes
    moved in the last hour (with ``metadata``: of its MDTs, by operations); None when
    InfluxDB does not answer."""
    now = time.time() if now is None else now
    window = (fs, now - PAGE_SECONDS, now, target, server)
    statement = (client_operations_statement if metadata else client_totals_statement)(*window)
    try:
        (rows,) = influx.query_tagged([statement])
    except influx.InfluxError:
        return None
    if metadata:
        loads = [
            ClientLoad(row.get(schema.CLIENT) or "", 0, 0, operation_count(row)) for row in rows
        ]
        ranked = sorted((c for c in loads if c.operations), key=lambda c: -c.operations)
        return ranked[:PAGE_LIMIT]
    loads = [
        ClientLoad(
            client=row.get(schema.CLIENT) or "",
            read_bytes=row.get("read_bytes") or 0,
            write_bytes=row.get("write_bytes") or 0,
            operations=(row.get("read_calls") or 0) + (row.get("write_calls") or 0),
        )
        for row in rows
    ]
    ranked = sorted((c for c in loads if c.bytes or c.operations), key=lambda c: -c.bytes)
    return ranked[:PAGE_LIMIT]
