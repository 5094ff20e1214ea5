"""The real Redis, InfluxDB and a real Celery worker, as the test profile started them."""

from __future__ import annotations

import time
import uuid

import pytest

from portal import influxdb as influx
from portal.health.tasks import probe_services


@pytest.mark.django_db(transaction=True)
def test_a_task_goes_through_redis_to_a_worker_and_its_result_comes_back(celery_worker):
    result = probe_services.delay()
    answer = result.get(timeout=60)
    # The worker ran it: it reached the database and both services from its own process.
    assert answer["database"]["ok"] is True
    assert answer["redis"]["ok"] is True
    assert answer["influxdb"]["ok"] is True
    assert result.status == "SUCCESS"


def test_a_point_written_to_influxdb_reads_back(services):
    influx.ensure_database()
    marker = uuid.uuid4().hex[:12]
    now = int(time.time())
    influx.write_lines([f"roundtrip,marker={marker} value=42.5,count=7i {now}"])
    points = influx.query(
        "SELECT value, count FROM roundtrip WHERE marker = $marker", bind_params={"marker": marker}
    )
    assert points == [{"time": now, "value": 42.5, "count": 7}]
