"""The health tests' virtual rack and metrics database serve the analytics tests as well."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings

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


@pytest.fixture(autouse=True)
def no_kept_reports():
    """Each test computes its reports from its own points: none kept by an earlier test (whose
    settings rows, loaded again from the migrations, may have had the same times)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    if kept := list(client.scan_iter("*analytics:report:*", count=1000)):
        client.delete(*kept)
    yield
