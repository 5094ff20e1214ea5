"""The statements that read what the servers' kernels said (``sensors.kmsg``): the Lustre and
LNet lines (``kernel_log``, one point a line) and the storms counted past the sensor's bound
(``kernel_storm``), filtered by server, filesystem, target, message number and severity, newest
first (``portal.health.services.kernel_lines``)."""

from __future__ import annotations

from dataclasses import dataclass

from metrics.influxql.common import between, quote_identifier, quote_string, tags
from sensors import schema
from sensors.kmsg import SEVERITIES  # most severe first, as the sensor tags them


@dataclass(frozen=True)
class LineFilter:
    """Which lines: any of ``servers`` (all when empty); of filesystem ``fs`` and, within it,
    any of ``targets`` (``OST0003``); one message number (``11-0``); severities at least as
    severe as ``severity``. Every value is quoted into the statement, never spliced."""

    servers: tuple[str, ...] = ()
    fs: str = ""
    targets: tuple[str, ...] = ()
    message_number: str = ""
    severity: str = ""
    # Only lines whose message matches this regular expression (fixed by the caller: never a
    # user's text; a `/` in it is escaped).
    message_pattern: str = ""

    def condition(self) -> str:
        parts = []
        if self.servers:
            parts.append(_any(schema.SERVER, self.servers))
        if self.fs:
            parts.append(f"{quote_identifier(schema.FS)} = {quote_string(self.fs)}")
        if self.targets:
            parts.append(_any(schema.TARGET, self.targets))
        if self.message_number:
            parts.append(
                f"{quote_identifier(schema.MESSAGE_NUMBER)} = {quote_string(self.message_number)}"
            )
        if self.severity:
            at_least = SEVERITIES[: SEVERITIES.index(self.severity) + 1]
            parts.append(_any(schema.SEVERITY, at_least))
        if self.message_pattern:
            pattern = self.message_pattern.replace("/", "\\/")
            parts.append(f"{quote_identifier('message')} =~ /{pattern}/")
        return " AND ".join(parts)


def _any(tag: str, values: tuple[str, ...]) -> str:
    name = quote_identifier(tag)
    return "(" + " OR ".join(f"{name} = {quote_string(v)}" for v in values) + ")"


def _where(which: LineFilter, since: float, until: float) -> str:
    condition = which.condition()
    return f"{condition} AND {between(since, until)}" if condition else between(since, until)


def lines_statement(which: LineFilter, since: float, until: float, limit: int) -> str:
    """The newest ``limit`` lines in the window, newest first, one row each with its tags as
    columns (one flat answer across every server's series)."""
    columns = tags(schema.KERNEL_LOG.tags)
    fields = ", ".join(quote_identifier(f) for f in schema.KERNEL_LOG_FIELDS)
    return (
        f"SELECT {columns}, {fields} FROM {quote_identifier(schema.KERNEL_LOG.name)} "
        f"WHERE {_where(which, since, until)} ORDER BY time DESC LIMIT {int(limit)}"
    )


def storms_statement(which: LineFilter, since: float, until: float) -> str:
    """The lines counted but not sent in the window, summed per series (server, target,
    message number, severity)."""
    return (
        f"SELECT sum({quote_identifier('lines')}) AS {quote_identifier('lines')}, "
        f"max({quote_identifier('last_sequence')}) AS {quote_identifier('last_sequence')} "
        f"FROM {quote_identifier(schema.KERNEL_STORM.name)} "
        f"WHERE {_where(which, since, until)} GROUP BY {tags(schema.KERNEL_STORM.tags)}"
    )
