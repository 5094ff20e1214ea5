"""Every Grafana panel's query, and every dashboard variable's, run against the test InfluxDB
filled by the sensor agent on a virtual rack (balanced workload, and one client reconnecting
to the target the variables pick, so that its kernel-lines table has a line), with Grafana's
macros and variables replaced as Grafana would: each returns data."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.conf import settings

from dashboards.__main__ import GENERATED
from dashboards.views import DASHBOARDS
from portal import influxdb as influx
from portal.health.tests.conftest import SENSOR_INTERVAL
from simulator import kernel_log
from simulator.rack import Rack

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.rack(seconds=40)]

VALUES = {
    "fs": "scratch",
    "ssu": "ssu01",
    "server": "oss01",
    "target": "OST0002",
    "array": "ssu01-a",
}


def grafana_substitute(query: str) -> str:
    query = query.replace("$timeFilter", "time > now() - 15m")
    query = query.replace("$__interval", f"{int(SENSOR_INTERVAL)}s")
    return re.sub(r"\$(\w+)", lambda match: VALUES[match.group(1)], query)


def numbers(points: list[dict]) -> list[float]:
    return [
        value
        for point in points
        for key, value in point.items()
        if key != "time" and isinstance(value, int | float) and not isinstance(value, bool)
    ]


def texts(points: list[dict]) -> list[str]:
    return [value for point in points for value in point.values() if isinstance(value, str)]


def client_reconnects(rack, host: str, target: str) -> None:
    """The line a Lustre 2.15 server logs when a client comes back to one of its targets."""
    with Rack.open(rack.root) as state:
        kernel_log.append(
            state.state["servers"][host],
            time.time(),
            kernel_log.WARNING,
            f"Lustre: {target}: Client 5d1f0c3a-8e4b-4c2e-9a77-0f3c2b1d6e90 "
            "(at 169.254.100.7@tcp) reconnecting",
        )
        state.render([host])


def test_every_panel_query_returns_data_from_the_sensors_of_a_virtual_rack(
    virtual_rack, metrics_db, tmp_path
):
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")
    client_reconnects(virtual_rack, VALUES["server"], f"{VALUES['fs']}-{VALUES['target']}")
    virtual_rack.wait_rounds(6)
    checked = 0
    for uid in DASHBOARDS:
        board = json.loads((GENERATED / f"{uid}.json").read_text())
        for variable in board["templating"]["list"]:
            values = influx.query(grafana_substitute(variable["query"]))
            assert VALUES[variable["name"]] in [v["value"] for v in values], (uid, variable)
        for panel in board["panels"]:
            for target in panel["targets"]:
                query = grafana_substitute(target["query"])
                # A table of lines shows text; every other panel draws numbers.
                data = texts if panel["type"] == "table" else numbers
                deadline = time.monotonic() + 4 * SENSOR_INTERVAL
                while True:
                    (points,) = influx.query_tagged([query], epoch="s")
                    if data(points) or time.monotonic() > deadline:
                        break
                    time.sleep(1)
                assert data(points), f"{uid} / {panel['title']}: no data for {query}"
                checked += 1
    assert checked >= 20
