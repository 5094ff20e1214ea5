"""A chart range reads the retention policy that holds its data (issue 11): a young rack whose
1-minute means hold one minute so far is drawn from its raw points, not from that one mean."""

from __future__ import annotations

import time

from metrics.influxql.common import MINUTE_POLICY
from portal import influxdb as influx
from portal.health.services import charts
from portal.health.tests.metrics import RackMetrics
from portal.health.tests.test_health_pages import login


def test_a_young_rack_is_drawn_from_its_raw_points_when_the_minute_means_hold_one_minute(
    client, world, rack_inventory, metrics_db
):
    from django.core.management import call_command

    call_command("influxdb_setup", verbosity=0)
    charts._policies.clear()  # forget the policies asked before they existed
    rack = RackMetrics()
    now = time.time()
    for seconds_ago in (90, 80, 70, 60, 50, 40, 30, 20, 10, 0):
        rack.write(now - seconds_ago)
    # What the minute's continuous query writes at the first minute boundary: one mean.
    minute = int(now // 60 * 60 - 60)
    influx.client().write_points(
        [
            f"node,server=oss01 mean_mem_total_kb=100.0,mean_mem_available_kb=50.0 {minute}",
            f"ost,fs=scratch,target=OST0002,server=oss01 mean_kbytes_total=100.0,"
            f"mean_kbytes_free=50.0,mean_kbytes_avail=50.0 {minute}",
        ],
        protocol="line",
        time_precision="s",
        retention_policy=MINUTE_POLICY,
    )
    login(client, "viewer")
    for chart, kind, name in (
        ("memory", "server", "oss01"),
        ("fill", "target", "scratch-OST0002"),
    ):
        body = client.get(f"/health/charts/{chart}/?kind={kind}&name={name}&range=90d").json()
        assert body["policy"] == "raw", chart
        assert len(body["time"]) >= 5, f"{chart}: {body['time']}"
