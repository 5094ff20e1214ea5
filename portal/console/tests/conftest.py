"""The health tests' clustered virtual rack and metrics database serve the console's tests."""

from __future__ import annotations

from portal.health.tests.conftest import metrics_db, virtual_rack  # noqa: F401
