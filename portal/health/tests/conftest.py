"""Fixtures of the health tests: a saved inventory (MDS pair and the reference SSU, provisioned),
and an InfluxDB database of its own for each test, on the test profile's real InfluxDB."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

import pytest

from portal import influxdb as influx

SPECS = Path(__file__).resolve().parents[3] / "provisioning" / "tests" / "specs"


def load_spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


@pytest.fixture
def rack_inventory(db):
    """scratch: MDS pair mds01 (mds01, mds02) and SSU ssu01 (oss01, oss02, 24 OSTs), mounted."""
    from portal.inventory.provisioned import mark_provisioned
    from portal.inventory.services import save_plans

    pairs = save_plans(
        [copy.deepcopy(load_spec("mds_pair")), copy.deepcopy(load_spec("reference_ssu"))]
    )
    mark_provisioned(pairs)
    return pairs


@pytest.fixture
def metrics_db(services, settings):
    """A fresh InfluxDB database for this test, dropped afterwards."""
    settings.INFLUXDB_DATABASE = f"health_{uuid.uuid4().hex[:10]}"
    influx.ensure_database()
    yield settings.INFLUXDB_DATABASE
    influx.client().drop_database(settings.INFLUXDB_DATABASE)


@pytest.fixture
def evaluated_rack(rack_inventory, metrics_db):
    """Two sensor rounds of the healthy rack_inventory, ten seconds apart, evaluated: colours
    and charts have data. The RackMetrics that wrote them is returned to write more."""
    import time

    from portal.health.services.evaluation import evaluate_and_store
    from portal.health.tests.metrics import RackMetrics

    rack = RackMetrics()
    now = time.time()
    rack.write(now - 20)
    rack.write(now - 10)
    evaluate_and_store(now=now - 10)
    return rack


# Seconds between sensor rounds on the virtual rack (10 on real servers): each server runs about
# eight virtual commands a round, which a 2-core machine must keep up with.
SENSOR_INTERVAL = 5.0


def reference_rack(root):
    """An MDS pair and the reference SSU on the virtual rack at `root`, clustered, not yet
    running."""
    from portal.health.tests.virtual_rack import VirtualRack

    rack = VirtualRack(
        root, [load_spec("mds_pair"), load_spec("reference_ssu")], interval=SENSOR_INTERVAL
    )
    rack.build()
    return rack


@pytest.fixture
def virtual_rack(tmp_path):
    """The reference rack (`reference_rack`) of one test."""
    rack = reference_rack(tmp_path / "rack")
    yield rack
    rack.stop()


def virtual_rack_thresholds(silent_rounds: int = 3):
    """What an administrator of the virtual rack sets: a sensor silent for three of its
    intervals is silent (the temperatures keep their defaults and the BMC's own limits)."""
    from portal.health.models import HealthSettings

    row = HealthSettings.load()
    row.sensor_silence_seconds = silent_rounds * SENSOR_INTERVAL + 1
    row.full_clean()
    row.save()
