"""The health tests' virtual rack and metrics database serve the survey tests as well."""

from __future__ import annotations

from portal.health.tests.conftest import (  # noqa: F401
    metrics_db,
    rack_inventory,  # noqa: F401, E402
    virtual_rack,
)
