"""InfluxDB line protocol, encoded by hand: the sensor builds tens of thousands of lines per
round, so it writes strings directly instead of going through point objects.

    measurement,tag1=v1,tag2=v2 field1=12i,field2=1.5,field3="text" 1700000000000

Escaping (InfluxDB 1.x): measurement names escape commas and spaces; tag keys, tag values and
field keys escape commas, equals signs and spaces; string field values escape double quotes
and backslashes. Integers carry the `i` suffix. A line cannot hold a newline anywhere, so
control characters in names (a job id may hold anything) are replaced by `?`, as Lustre itself
did before 2.15.4.
"""

from __future__ import annotations

import math
import re

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
