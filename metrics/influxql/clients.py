"""What each client moved through a target or a server over a window, from the targets'
per-export stats (``ost_client``, ``sensors.lustre.collect_exports``): each series' counter
increments summed (a counter that went back, a target remounted, adds nothing), then summed per
client NID (``portal.health.services.clients``)."""

from __future__ import annotations

from metrics.influxql.common import between, quote_identifier, quote_string, tags
from sensors import schema

COUNTERS = ("read_bytes", "write_bytes", "read_calls", "write_calls")


def client_totals_statement(
    fs: str, since: float, until: float, target: str = "", server: str = ""
) -> str:
    """Per client: its bytes and calls on one target (``OST0003``) of ``fs``, or on every
    target one server served, in the window."""
    conditions = [f"{quote_identifier(schema.FS)} = {quote_string(fs)}"]
    if target:
        conditions.append(f"{quote_identifier(schema.TARGET)} = {quote_string(target)}")
    if server:
        conditions.append(f"{quote_identifier(schema.SERVER)} = {quote_string(server)}")
    conditions.append(between(since, until))
    inner = ", ".join(
        f"non_negative_difference({quote_identifier(c)}) AS {quote_identifier(c)}" for c in COUNTERS
    )
    outer = ", ".join(f"sum({quote_identifier(c)}) AS {quote_identifier(c)}" for c in COUNTERS)
    return (
        f"SELECT {outer} FROM (SELECT {inner} FROM {quote_identifier(schema.OST_CLIENT.name)} "
        f"WHERE {' AND '.join(conditions)} GROUP BY {tags(schema.OST_CLIENT.tags)}) "
        f"GROUP BY {quote_identifier(schema.CLIENT)}"
    )
