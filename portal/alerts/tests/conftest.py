"""The alerts' tests share the health tests' virtual rack; the `smtp` fixture (a real SMTP
server on loopback, portal.tests.smtp) is the project's, in portal/conftest.py."""

from __future__ import annotations

# The health tests' virtual rack and metrics database, for the alerts' acceptance test.
from portal.health.tests.conftest import (  # noqa: F401
    metrics_db,
    rack_inventory,
    virtual_rack,
)
