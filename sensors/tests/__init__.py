"""Tests of the sensor package. `fixture_text` reads the real Lustre samples copied under
sensors/tests/fixtures/lustre/ (sources and licences in its SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "lustre"


def fixture_text(relative: str) -> str:
    return (FIXTURES / relative).read_text(encoding="utf-8")
