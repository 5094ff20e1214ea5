"""The health tests' virtual rack and metrics database serve the analytics tests as well."""

from __future__ import annotations

from portal.health.tests.conftest import metrics_db, rack_inventory, virtual_rack  # noqa: F401


def rounded(value, digits: int = 6, leave_out: tuple[str, ...] = ()):
    """A report's numbers rounded (and keys left out) for comparing two computations."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, list):
        return [rounded(v, digits, leave_out) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v, digits, leave_out) for k, v in value.items() if k not in leave_out}
    return value
