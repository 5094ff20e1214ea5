"""InfluxDB line protocol, encoded by hand: the sensor builds tens of thousands of lines per
round, so it writes strings directly instead of going through point objects.

    measurement,tag1=v1,tag2=v2 field1=12i,field2=1.5,field3="text" 1700000000000

Escaping (InfluxDB 1.x): measurement names escape commas and spaces; tag keys, tag values and
field keys escape commas, equals signs and spaces; string field values escape double quotes
and backslashes. Integers carry the `i` suffix. A line cannot hold a newline anywhere, so
control characters in names (a job id may hold anything) are replaced by `?`, as Lustre itself
did before 2.15.4. `decode` reads a line back by the same rules (a backslash before any other
character is kept, as InfluxDB keeps it): the analytics report and the tests use it.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_KEY_SPECIALS = (",", "=", " ")


def _clean(text: str) -> str:
    return _CONTROL_RE.sub("?", text) if not text.isprintable() else text


def escape_measurement(name: str) -> str:
    name = _clean(name)
    if "," in name or " " in name:
        name = name.replace(",", "\\,").replace(" ", "\\ ")
    return name


def escape_key(text: str) -> str:
    """A tag key, tag value or field key."""
    text = _clean(text)
    if "," in text or "=" in text or " " in text:
        text = text.replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")
    # A trailing backslash would escape the separator that follows it.
    if text.endswith("\\"):
        text = text[:-1] + "?"
    return text


def escape_string(value: str) -> str:
    """A string field value, quotes included."""
    value = _clean(value)
    if "\\" in value or '"' in value:
        value = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{value}"'


def series(measurement: str, tags: dict[str, str]) -> str:
    """`measurement,k1=v1,k2=v2` with the tags sorted by key (InfluxDB's preferred order) and
    empty tag values left out (InfluxDB refuses them)."""
    parts = [escape_measurement(measurement)]
    for key in sorted(tags):
        value = tags[key]
        if value:
            parts.append(f"{escape_key(key)}={escape_key(value)}")
    return ",".join(parts)


def format_value(value: int | float | str) -> str | None:
    """One field value; None for a value InfluxDB cannot store (NaN, infinity, None)."""
    kind = type(value)
    if kind is int:
        return f"{value}i"
    if kind is float:
        return repr(value) if math.isfinite(value) else None
    if kind is str:
        return escape_string(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return None
    raise TypeError(f"cannot encode {value!r} as a field value")


def line(prefix: str, fields: dict[str, int | float | str], timestamp: int) -> str | None:
    """One point: `prefix` from `series()`, fields by name, timestamp in the writer's precision.

    Returns None when no field has a value (a point needs at least one field). Field keys are
    assumed to be plain names (Lustre counter names); others are escaped.
    """
    parts = []
    for key, value in fields.items():
        kind = type(value)
        if kind is int:
            encoded = f"{value}i"
        else:
            encoded = format_value(value)
            if encoded is None:
                continue
        if "," in key or "=" in key or " " in key or not key.isprintable():
            key = escape_key(key)
        parts.append(f"{key}={encoded}")
    if not parts:
        return None
    return f"{prefix} {','.join(parts)} {timestamp}"


class LineError(ValueError):
    """A line that is not InfluxDB line protocol."""


class Point(NamedTuple):
    """One decoded line; ``timestamp`` is None when the line has none (InfluxDB then uses the
    time it received it)."""

    measurement: str
    tags: dict[str, str]
    fields: dict[str, int | float | str | bool]
    timestamp: int | None


# What a backslash escapes where (InfluxDB 1.x); before any other character it is kept.
_MEASUREMENT_ESCAPES = ", "
_KEY_ESCAPES = ",= "
_STRING_ESCAPES = '"\\'


def _unescape(text: str, escapes: str) -> str:
    if "\\" not in text:
        return text
    out, escaped = [], False
    for char in text:
        if escaped:
            if char not in escapes:
                out.append("\\")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    if escaped:
        out.append("\\")
    return "".join(out)


def _split_unescaped(text: str, separator: str) -> list[str]:
    """Split on ``separator`` where it is not escaped by a backslash."""
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _field_value(text: str) -> int | float | str | bool:
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise LineError(f"unterminated string value {text!r}")
        return _unescape(text[1:-1], _STRING_ESCAPES)
    if text[-1:] in ("i", "u") and text[:-1].lstrip("-").isdigit():
        return int(text[:-1])
    if text in ("t", "T", "true", "True", "TRUE"):
        return True
    if text in ("f", "F", "false", "False", "FALSE"):
        return False
    try:
        return float(text)
    except ValueError:
        raise LineError(f"not a field value: {text!r}") from None


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    """Split on ``separator`` outside quoted string values, minding backslash escapes."""
    parts, current, escaped, quoted = [], [], False, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def decode(text: str) -> Point:
    """One line back into its measurement, tags, fields and timestamp: the inverse of
    ``series`` and ``line``, reading what InfluxDB and ``influx_inspect export -lponly`` write."""
    text = text.strip()
    # Quotes are plain characters before the first unescaped space (a job id may hold one).
    key = _split_unescaped(text, " ")[0]
    sections = [key, *(part for part in _split_outside_quotes(text[len(key) :], " ") if part)]
    if len(sections) not in (2, 3):
        raise LineError("expected: measurement[,tags] fields [timestamp]")
    head = _split_unescaped(sections[0], ",")
    measurement = _unescape(head[0], _MEASUREMENT_ESCAPES)
    if not measurement:
        raise LineError("the measurement name is empty")
    tags = {}
    for pair in head[1:]:
        key, equals, value = _split_pair(pair)
        if not equals or not key or not value:
            raise LineError(f"not a tag: {pair!r}")
        tags[_unescape(key, _KEY_ESCAPES)] = _unescape(value, _KEY_ESCAPES)
    fields = {}
    for pair in _split_outside_quotes(sections[1], ","):
        key, equals, value = _split_pair(pair)
        if not equals or not key or not value:
            raise LineError(f"not a field: {pair!r}")
        fields[_unescape(key, _KEY_ESCAPES)] = _field_value(value)
    timestamp = None
    if len(sections) == 3:
        if not sections[2].lstrip("-").isdigit():
            raise LineError(f"not a timestamp: {sections[2]!r}")
        timestamp = int(sections[2])
    return Point(measurement, tags, fields, timestamp)


def _split_pair(text: str) -> tuple[str, str, str]:
    """``key=value`` at the first unescaped ``=``."""
    parts = _split_unescaped(text, "=")
    if len(parts) < 2:
        return text, "", ""
    return parts[0], "=", "=".join(parts[1:])
