"""The statements of the alert rules (``portal.alerts``): the newest value of a field per series,
when each series last reported, and a rule's backtest over a range."""

from __future__ import annotations

from metrics.influxql.common import POLICY_STEPS, RAW, Source, quote_identifier, tags, window
from sensors import schema

# A threshold rule reads the newest point of each series no older than this (three rounds).
ALERT_FRESH_SECONDS = 3 * POLICY_STEPS[None]
# A no-data rule knows the series that reported within this window.
ALERT_KNOWN_SECONDS = 3600


def _alert_columns(source: Source, field: str, percent_of: str, rate: bool) -> str:
    if rate:
        return f"non_negative_derivative(last({source.field(field)}), 1s) AS value"
    columns = f"last({source.field(field)}) AS value"
    if percent_of:
        columns += f", last({source.field(percent_of)}) AS whole"
    return columns


def alert_now_statement(
    measurement: schema.Measurement, field: str, percent_of: str = "", rate: bool = False
) -> str:
    """The newest value of ``field`` per series (its rate: per 10 s step, the last one wins;
    with ``percent_of``: that field too, as ``whole``)."""
    grouped = tags(measurement.tags)
    if rate:
        grouped = f"time({RAW.step}s), {grouped}"
    return (
        f"SELECT {_alert_columns(RAW, field, percent_of, rate)} "
        f"FROM {RAW.measurement(measurement.name)} WHERE {window(ALERT_FRESH_SECONDS)} "
        f"GROUP BY {grouped}" + (" fill(none)" if rate else "")
    )


def alert_last_seen_statement(measurement: schema.Measurement, field: str) -> str:
    """When each series of the last hour last reported ``field``."""
    return (
        f"SELECT last({quote_identifier(field)}) AS value FROM {RAW.measurement(measurement.name)} "
        f"WHERE {window(ALERT_KNOWN_SECONDS)} GROUP BY {tags(measurement.tags)}"
    )


def alert_history_statement(
    source: Source,
    measurement: schema.Measurement,
    field: str,
    seconds: int,
    percent_of: str = "",
    rate: bool = False,
) -> str:
    """One value per series and step over the last ``seconds`` (a rule's backtest); a no-data
    rule counts the points of each step instead (``fill(0)``: an empty step is a zero)."""
    return (
        f"SELECT {_alert_columns(source, field, percent_of, rate)} "
        f"FROM {source.measurement(measurement.name)} WHERE {window(seconds)} "
        f"GROUP BY time({source.step}s), {tags(measurement.tags)} fill(none)"
    )


def alert_count_history_statement(
    source: Source, measurement: schema.Measurement, field: str, seconds: int
) -> str:
    return (
        f"SELECT count({source.field(field)}) AS value "
        f"FROM {source.measurement(measurement.name)} WHERE {window(seconds)} "
        f"GROUP BY time({source.step}s), {tags(measurement.tags)} fill(0)"
    )
