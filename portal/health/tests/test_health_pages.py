"""The dashboard, the drill-down pages, the chart data and the thresholds page, as a logged-in
user sees them, on points in the sensors' schema in the real test InfluxDB."""

from __future__ import annotations

import time

import pytest

from portal.health.models import HealthSettings
from portal.health.services.evaluation import evaluate_and_store
from portal.health.tests.metrics import RackMetrics
from portal.inventory.models import Drive

pytestmark = pytest.mark.services


@pytest.fixture
def evaluated(rack_inventory, metrics_db):
    """Five rounds of a busy rack with one failed drive in ssu01-a-vg02, evaluated."""
    rack = RackMetrics()
    drive = Drive.objects.filter(volume_group__name="ssu01-a-vg02").select_related(
        "enclosure__array"
    )[0]
    rack.failed_drives = {
        (drive.enclosure.array.name, drive.enclosure.position, drive.drawer, drive.slot)
    }
    now = time.time()
    rack.failed_drives, failed = set(), rack.failed_drives
    rack.write(now - 50)
    rack.write(now - 40)
    evaluate_and_store(now=now - 40)  # all green first
    rack.failed_drives = failed
    for seconds_ago in (30, 20, 10, 0):
        rack.write(now - seconds_ago)
    evaluate_and_store(now=now)
    return rack


def login(client, role: str):
    client.login(username=role, password=f"pw-{role}-123!")
    return client


def test_the_dashboard_shows_the_filesystem_light_counts_tiles_and_the_latest_changes(
    client, world, evaluated
):
    page = login(client, "viewer").get("/").content.decode()
    assert 'aria-label="filesystem scratch is orange"' in page
    assert '<strong class="red">0</strong> errors' in page
    assert '<strong class="orange">2</strong> warnings' in page  # the OST and its array
    assert 'data-name="ssu01" data-status="orange"' in page
    assert 'data-name="scratch-OST0002" data-status="orange"' in page
    assert "volume group ssu01-a-vg02 is degraded: drive ssu01-a-e0 drawer" in page
    assert 'data-name="oss01" data-status="green"' in page
    assert "MDS pair mds01" in page
    # The latest changes: the OST went orange.
    assert "scratch-OST0002</a>" in page and "pill orange" in page
    # The charts read the JSON endpoints with uPlot, served as a static file.
    assert "vendor/uplot/uPlot.iife.min.js" in page
    assert "/health/charts/throughput/?kind=filesystem&amp;name=scratch" in page


def test_the_overview_panel_refreshes_alone(client, world, evaluated):
    response = login(client, "viewer").get("/health/overview/?fs=scratch")
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b'id="fs-status" data-status="orange"' in response.content


def test_the_ssu_server_and_target_pages_show_colour_reasons_charts_and_history(
    client, world, evaluated
):
    login(client, "viewer")
    ssu = client.get("/health/ssus/ssu01/").content.decode()
    assert 'data-status="orange"' in ssu and "SSU ssu01" in ssu
    assert "/health/charts/oss-share/?kind=ssu&amp;name=ssu01" in ssu
    server = client.get("/health/servers/oss02/").content.decode()
    assert 'id="object-status" data-status="green"' in server
    for chart in ("cpu", "memory", "temperatures", "lnet"):
        assert f"/health/charts/{chart}/?kind=server&amp;name=oss02" in server
    target = client.get("/health/targets/scratch-OST0002/").content.decode()
    assert 'id="object-status" data-status="orange"' in target
    assert "volume group ssu01-a-vg02 is degraded" in target
    assert "io-sizes" in target and "iops" in target
    history = target[target.index("<h2>History</h2>") :]
    assert 'green</span> → <span class="pill orange">orange' in history, history
    assert client.get("/health/targets/scratch-OST9999/").status_code == 404


def test_chart_endpoints_return_the_metrics_of_the_scope(client, world, evaluated):
    login(client, "viewer")
    throughput = client.get("/health/charts/throughput/?kind=filesystem&name=scratch&range=15m")
    body = throughput.json()
    assert body["unit"] == "MiB/s" and body["policy"] == "raw"
    # 24 OSTs, each 400 MB read and 300 MB written per 10 s round: 960 and 720 MB/s, in the
    # binary units every size is shown in: 915.5 and 686.6 MiB/s.
    assert max(body["series"]["read"]) == pytest.approx(960e6 / 2**20, rel=0.01)
    assert max(body["series"]["write"]) == pytest.approx(720e6 / 2**20, rel=0.01)
    capacity = client.get("/health/charts/capacity/?kind=ssu&name=ssu01").json()
    assert len(capacity["osts"]) == 24
    assert capacity["total"]["fill_percent"] == pytest.approx(40, abs=0.1)
    share = client.get("/health/charts/oss-share/?kind=filesystem&name=scratch").json()
    assert "servers" in share, share
    assert {s["server"]: s["share_percent"] for s in share["servers"]} == {
        "oss01": 50.0,
        "oss02": 50.0,
    }
    cpu = client.get("/health/charts/cpu/?kind=server&name=oss01&range=15m").json()
    assert set(cpu["series"]) == {"user", "system", "iowait"}
    assert max(v for v in cpu["series"]["user"] if v is not None) == pytest.approx(10, abs=0.5)
    temps = client.get("/health/charts/temperatures/?kind=server&name=oss01").json()
    assert list(temps["series"]) == ["CPU1 Temp"]
    sizes = client.get("/health/charts/io-sizes/?kind=target&name=scratch-OST0002").json()
    assert sizes["buckets"] == ["4K", "128K", "1M"]
    fill = client.get("/health/charts/fill/?kind=target&name=scratch-OST0002").json()
    assert fill["series"]["fill"][-1] == pytest.approx(40, abs=0.1)
    assert client.get("/health/charts/cpu/?kind=target&name=scratch-OST0002").status_code == 404
    assert client.get("/health/charts/cpu/?kind=server&name=nosuch").status_code == 404


def test_an_admin_changes_the_thresholds_and_the_next_evaluation_uses_them(
    client, world, evaluated
):
    login(client, "admin")
    form = {
        field: getattr(HealthSettings.load(), field)
        for field in (
            "capacity_warning_percent",
            "capacity_critical_percent",
            *(
                f"temperature_{kind}_{level}_c"
                for kind in ("cpu", "inlet", "exhaust", "dimm", "psu", "other")
                for level in ("warning", "critical")
            ),
            "cpu_idle_warning_percent",
            "cpu_idle_critical_percent",
            "memory_available_warning_percent",
            "memory_available_critical_percent",
            "ost_fill_spread_warning_percent",
            "ost_fill_spread_critical_percent",
            "sensor_silence_seconds",
        )
    }
    refused = client.post("/health/thresholds/", {**form, "capacity_warning_percent": 97})
    assert "the warning level must be below the critical level" in refused.content.decode()
    saved = client.post(
        "/health/thresholds/",
        {**form, "capacity_warning_percent": 30, "capacity_critical_percent": 35},
    )
    assert saved.status_code == 302
    result = evaluate_and_store()
    osts = [n for tree in result.trees for n, _ in tree.walk() if n.name == "scratch-OST0005"]
    assert osts[0].status == "red"
    assert osts[0].reasons == ["40.0 % full (critical at 35 %)"]


def test_a_viewer_sees_the_thresholds_but_cannot_change_them(client, world, db):
    login(client, "viewer")
    page = client.get("/health/thresholds/").content.decode()
    assert "Only administrators change them." in page
    assert "disabled" in page
    assert client.post("/health/thresholds/", {"capacity_warning_percent": 1}).status_code == 403
    assert HealthSettings.load().capacity_warning_percent == 80


def test_a_long_range_shows_young_data_from_the_finer_policy(
    client, world, rack_inventory, metrics_db
):
    """The 1-hour means are filled at the end of each hour, the 1-minute means each minute: a
    90-day chart of a rack that is a minute old shows its raw points instead of nothing."""
    from django.core.management import call_command

    from portal.health.services import charts

    call_command("influxdb_setup", verbosity=0)  # the policies, as make demo makes them
    charts._policies.clear()  # forget the policies asked before they existed
    rack = RackMetrics()
    now = time.time()
    for seconds_ago in (50, 40, 30, 20, 10, 0):
        rack.write(now - seconds_ago)
    login(client, "viewer")
    for chart, kind, name in (
        ("throughput", "filesystem", "scratch"),
        ("cpu", "server", "oss01"),
        ("memory", "server", "oss01"),
        ("temperatures", "server", "oss01"),
        ("fill", "target", "scratch-OST0002"),
    ):
        body = client.get(f"/health/charts/{chart}/?kind={kind}&name={name}&range=90d").json()
        assert body["time"], f"{chart}: no data over 90 days"
    share = client.get("/health/charts/oss-share/?kind=filesystem&name=scratch&range=1y").json()
    assert share["servers"]
