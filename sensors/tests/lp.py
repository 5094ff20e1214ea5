"""Reading the sensor's points back in tests (with `sensors.lineproto.decode`, the one
decoder), so assertions name tags and fields instead of matching substrings. Also the sensor run
used by several tests."""

from __future__ import annotations

from sensors.collect import Collector
from sensors.config import SensorConfig
from sensors.lineproto import Point, decode

STATIC = {"ssu": "ssu01", "pair": "pair01"}


def parse_lines(lines: list[str] | str) -> list[Point]:
    if isinstance(lines, str):
        lines = [line for line in lines.splitlines() if line]
    return [decode(line) for line in lines]


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
