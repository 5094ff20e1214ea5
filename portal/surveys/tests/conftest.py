"""The health tests' virtual rack and metrics database serve the survey tests as well."""

from __future__ import annotations

from portal.health.tests.conftest import metrics_db, virtual_rack  # noqa: F401
