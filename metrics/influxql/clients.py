"""What each client moved through a target or a server over a window, from the targets'
per-export stats (``ost_client``, ``mdt_client``: ``sensors.lustre.ExportsReader``): each
series' counter increments summed (a counter that went back, a target remounted, adds
nothing), then summed per client NID (``portal.health.services.clients``).

An MDT's export stats count metadata operations, one field per operation the client made
(``open``, ``getattr``, ``unlink``, ... with their ``*_usecs`` times): every field is read, and
the caller adds up the counts (``operation_count``)."""

from __future__ import annotations

from metrics.influxql.common import between, quote_identifier, quote_string, tags
from sensors import schema

COUNTERS = ("read_bytes", "write_bytes", "read_calls", "write_calls")


def _conditions(fs: str, since: float, until: float, target: str, server: str) -> list[str]:
    conditions = [f"{quote_identifier(schema.FS)} = {quote_string(fs)}"]
    if target:
        conditions.append(f"{quote_identifier(schema.TARGET)} = {quote_string(target)}")
    if server:
        conditions.append(f"{quote_identifier(schema.SERVER)} = {quote_string(server)}")
    conditions.append(between(since, until))
    return conditions


def client_totals_statement(
    fs: str, since: float, until: float, target: str = "", server: str = ""
) -> str:
    """Per client: its bytes and calls on one target (``OST0003``) of ``fs``, or on every
    OST one server served, in the window."""
    conditions = _conditions(fs, since, until, target, server)
    inner = ", ".join(
        f"non_negative_difference({quote_identifier(c)}) AS {quote_identifier(c)}" for c in COUNTERS
    )
    outer = ", ".join(f"sum({quote_identifier(c)}) AS {quote_identifier(c)}" for c in COUNTERS)
    return (
        f"SELECT {outer} FROM (SELECT {inner} FROM {quote_identifier(schema.OST_CLIENT.name)} "
        f"WHERE {' AND '.join(conditions)} GROUP BY {tags(schema.OST_CLIENT.tags)}) "
        f"GROUP BY {quote_identifier(schema.CLIENT)}"
    )


def client_operations_statement(
    fs: str, since: float, until: float, target: str = "", server: str = ""
) -> str:
    """Per client: each of its metadata counters' increments on one MDT (``MDT0000``) of
    ``fs``, or on every MDT one server served, in the window (fields
    ``sum_non_negative_difference_<counter>``)."""
    conditions = _conditions(fs, since, until, target, server)
    return (
        "SELECT sum(*) FROM (SELECT non_negative_difference(*) "
        f"FROM {quote_identifier(schema.MDT_CLIENT.name)} WHERE {' AND '.join(conditions)} "
        f"GROUP BY {tags(schema.MDT_CLIENT.tags)}) GROUP BY {quote_identifier(schema.CLIENT)}"
    )


_TOTAL = "sum_non_negative_difference_"
# Fields that are not a count of operations (``sensors.lustre.counter_fields``): times, sums
# of a sample's values, bytes.
_NOT_COUNTS = ("_usecs", "_secs", "_sum", "_bytes")


def operation_count(row: dict) -> float:
    """The operations of one row of ``client_operations_statement``: its counters' increments
    added up."""
    return sum(
        value
        for name, value in row.items()
        if name.startswith(_TOTAL)
        and not name.endswith(_NOT_COUNTS)
        and isinstance(value, int | float)
    )
