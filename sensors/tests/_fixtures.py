"""Access to the real Lustre samples copied under sensors/tests/fixtures/ (see SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "lustre"


def fixture_text(relative: str) -> str:
    return (FIXTURES / relative).read_text(encoding="utf-8")
