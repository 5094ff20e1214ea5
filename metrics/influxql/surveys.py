"""Whether a filesystem is in use before a survey loads its servers (``portal.surveys``)."""

from __future__ import annotations

from metrics.influxql.common import (
    PER_TARGET,
    filesystem_condition,
    quote_identifier,
    rate_statement,
    tags,
    window,
)
from sensors import schema


def survey_traffic_statements(filesystem: str, seconds: int) -> list[str]:
    """Whether a filesystem is in use before a survey loads its servers: its OSTs' bytes/s per
    minute over the last ``seconds`` (summed over the series), and the exports each OST counts
    now (clients, plus the metadata targets' connections)."""
    where = filesystem_condition(filesystem)
    step = 60
    traffic = rate_statement(
        schema.OST.name,
        {"read": "read_bytes", "write": "write_bytes"},
        where,
        inner_window=window(seconds + step),
        outer_window=window(seconds),
        step=f"{step}s",
    )
    exports = (
        f"SELECT last({quote_identifier('num_exports')}) AS {quote_identifier('exports')} "
        f"FROM {quote_identifier(schema.OST.name)} WHERE {where} AND {window(seconds)} "
        f"GROUP BY {tags(PER_TARGET)}"
    )
    return [traffic, exports]
