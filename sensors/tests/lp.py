"""Reading line protocol back in tests, with InfluxDB 1.x's escaping rules, so assertions name
tags and fields instead of matching substrings. Also the sensor run used by several tests."""

from __future__ import annotations

from typing import NamedTuple

from sensors.collect import Collector
from sensors.config import SensorConfig

STATIC = {"ssu": "ssu01", "pair": "pair01"}


class Point(NamedTuple):
    measurement: str
    tags: dict[str, str]
    fields: dict[str, int | float | str]
    timestamp: int


def _split(text: str, separator: str, quotes: bool = False) -> list[str]:
    """Split on separators that are not escaped (and not inside double quotes)."""
    parts, current, escaped, quoted = [], [], False, False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif quotes and char == '"':
            quoted = not quoted
            current.append(char)
        elif char == separator and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    out, escaped = [], False
    for char in text:
        if escaped:
            if char not in ',= "\\':
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


def _value(text: str) -> int | float | str:
    if text.startswith('"'):
        return _unescape(text[1:-1])
    if text.endswith("i"):
        return int(text[:-1])
    return float(text)


def parse_line(line: str) -> Point:
    key, fields_text, timestamp = _split(line, " ", quotes=True)
    measurement, *tag_parts = _split(key, ",")
    tags = dict((_unescape(k), _unescape(v)) for k, v in (_split(part, "=") for part in tag_parts))
    fields = {}
    for part in _split(fields_text, ",", quotes=True):
        name, value = _split(part, "=", quotes=True)
        fields[_unescape(name)] = _value(value)
    return Point(_unescape(measurement), tags, fields, int(timestamp))


def parse_lines(lines: list[str] | str) -> list[Point]:
    if isinstance(lines, str):
        lines = [line for line in lines.splitlines() if line]
    return [parse_line(line) for line in lines]


def points_of(points: list[Point], measurement: str, **tags: str) -> list[Point]:
    return [
        p
        for p in points
        if p.measurement == measurement and all(p.tags.get(k) == v for k, v in tags.items())
    ]


def one(points: list[Point], measurement: str, **tags: str) -> Point:
    found = points_of(points, measurement, **tags)
    assert len(found) == 1, f"{len(found)} {measurement} points with {tags}"
    return found[0]


def collect_root(root, timestamp_ms: int = 1_700_000_000_000, **config):
    """One round over `root` as server oss01 of ssu01/pair01; returns (round, points)."""
    settings = {"root": str(root), "server": "oss01", "tags": dict(STATIC), **config}
    collector = Collector(SensorConfig(**settings))
    rnd = collector.collect(timestamp_ms)
    return rnd, parse_lines(rnd.lines)
