"""Tests of the sensor package. `fixture_text` reads the real Lustre samples copied under
sensors/tests/fixtures/lustre/ (sources and licences in its SOURCES.md)."""

from __future__ import annotations

from sensors.sample_trees import SAMPLES as FIXTURES
from sensors.sample_trees import sample_text as fixture_text

__all__ = ["FIXTURES", "fixture_text"]
