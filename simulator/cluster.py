"""Placeholder: Pacemaker boundary (filled in with the failure handling)."""

from __future__ import annotations


def tick(rack) -> None:
    return None
