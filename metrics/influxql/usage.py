"""The points the usage by owner is computed from (``portal.usage``, issue 35): the owners'
accounting summed over targets (``owner_usage``), per OST, and the quota master's limits
(``owner_quota``).

A target that fails over starts a new series (its ``server`` tag changes): the inner queries
group by target and owner only, so ``first``/``last`` pick across both servers' series and a
target is counted once. Space is summed over every target, as ``lfs quota`` does; inodes over
the MDTs only (an OST's ``inodes`` are its objects, not the owner's files).
"""

from __future__ import annotations

from metrics.influxql.common import (
    Source,
    between,
    filesystem_condition,
    quote_identifier,
    quote_string,
    tags,
)
from sensors import schema

# The pool of the quota master's own limits (an OST pool's limits are not the owner's quota).
FILESYSTEM_POOL = "0x0"
OWNER = (schema.KIND, schema.ID)
# Where each field is summed: every target for space, the MDTs for files.
SUMMED_OVER = {"kbytes": "", "inodes": f"{quote_identifier(schema.TARGET)} =~ /^MDT/"}


def _where(*conditions: str) -> str:
    return " AND ".join(condition for condition in conditions if condition)


def owner_totals_statement(
    source: Source, fs: str, field: str, selector: str, since: float, until: float
) -> str:
    """Each owner's ``field`` summed over the targets, from each target's ``selector``
    (``first`` or ``last``) point of the window: one row per kind and id."""
    where = _where(filesystem_condition(fs), SUMMED_OVER[field], between(since, until))
    name = quote_identifier(field)
    return (
        f"SELECT sum({name}) AS {name} FROM (SELECT {selector}({source.field(field)}) AS {name} "
        f"FROM {source.measurement(schema.OWNER_USAGE.name)} WHERE {where} "
        f"GROUP BY {tags((schema.TARGET, *OWNER))}) GROUP BY {tags(OWNER)}"
    )


def growth_statements(source: Source, fs: str, since: float, until: float) -> list[str]:
    """The window's first and last totals of space and of files, in this order:
    kbytes first, kbytes last, inodes first, inodes last."""
    return [
        owner_totals_statement(source, fs, field, selector, since, until)
        for field in ("kbytes", "inodes")
        for selector in ("first", "last")
    ]


def span_statements(source: Source, fs: str, since: float, until: float) -> list[str]:
    """When the filesystem's accounting starts and ends in the window (a young rack's is
    shorter than the window): the time of its first and of its last point."""
    where = _where(filesystem_condition(fs), between(since, until))
    return [
        f"SELECT {selector}({source.field('kbytes')}) "
        f"FROM {source.measurement(schema.OWNER_USAGE.name)} WHERE {where}"
        for selector in ("first", "last")
    ]


def owner_span_statements(source: Source, fs: str, since: float, until: float) -> list[str]:
    """When each owner's accounting starts and ends in the window: an owner that first wrote
    within it starts later than the filesystem (its growth is over its own span). The time of
    its first and of its last point, per kind and id."""
    where = _where(filesystem_condition(fs), between(since, until))
    return [
        f"SELECT {selector}({source.field('kbytes')}) "
        f"FROM {source.measurement(schema.OWNER_USAGE.name)} WHERE {where} GROUP BY {tags(OWNER)}"
        for selector in ("first", "last")
    ]


def target_owners_statement(fs: str, since: float, until: float, target: str = "") -> str:
    """The newest space of every owner on each OST (or on one target) of the filesystem."""
    on = (
        f"{quote_identifier(schema.TARGET)} = {quote_string(target)}"
        if target
        else f"{quote_identifier(schema.TARGET)} =~ /^OST/"
    )
    where = _where(filesystem_condition(fs), on, between(since, until))
    return (
        f"SELECT last({quote_identifier('kbytes')}) AS {quote_identifier('kbytes')} "
        f"FROM {quote_identifier(schema.OWNER_USAGE.name)} WHERE {where} "
        f"GROUP BY {tags((schema.TARGET, *OWNER))}"
    )


def limits_statement(fs: str, since: float, until: float) -> str:
    """The quota master's newest limits of every owner of the filesystem's own pool."""
    columns = ", ".join(
        f"last({quote_identifier(field)}) AS {quote_identifier(field)}"
        for field in schema.OWNER_QUOTA.fields
    )
    where = _where(
        filesystem_condition(fs),
        f"{quote_identifier(schema.POOL)} = {quote_string(FILESYSTEM_POOL)}",
        between(since, until),
    )
    return (
        f"SELECT {columns} FROM {quote_identifier(schema.OWNER_QUOTA.name)} WHERE {where} "
        f"GROUP BY {tags(OWNER)}"
    )


def capacity_statement(fs: str, since: float, until: float) -> str:
    """The filesystem's newest size and free space: each OST's last point, summed."""
    where = _where(filesystem_condition(fs), between(since, until))
    total, free = quote_identifier("kbytes_total"), quote_identifier("kbytes_free")
    return (
        f"SELECT sum({total}) AS {total}, sum({free}) AS {free} FROM "
        f"(SELECT last({total}) AS {total}, last({free}) AS {free} "
        f"FROM {quote_identifier(schema.OST.name)} WHERE {where} "
        f"GROUP BY {quote_identifier(schema.TARGET)})"
    )
