"""The health tests' clustered virtual rack, saved inventory and metrics database serve the
console's tests."""

from __future__ import annotations

from portal.health.tests.conftest import metrics_db, rack_inventory, virtual_rack  # noqa: F401
