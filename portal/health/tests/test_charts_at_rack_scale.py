"""The capacity and OSS share charts of a 100-SSU filesystem (2,400 OSTs on 200 OSSs) stay
readable (issue 17): the fullest OSTs and busiest OSSs one by one, the others together with
the totals still those of all, and an SSU's own OSTs and OSSs when it is chosen. A rack of one
or two SSUs is drawn as before, every OST and OSS."""

from __future__ import annotations

import time

import pytest

from metrics.chart_rows import SHOWN
from portal import influxdb as influx
from portal.health.tests.conftest import load_spec
from portal.health.tests.test_health_pages import login
from portal.inventory.tests.conftest import second_ssu

pytestmark = pytest.mark.services

SERVERS = 200
OSTS_PER_SERVER = 12
TOTAL_KB = 100 * 2**30  # 100 TiB
FULLEST = "scratch-OST0779"
BUSIEST = "oss77"


def _server(number: int) -> str:
    return f"oss{number:02d}"  # oss01 and oss02 are ssu01's, in the inventory


def _fill(index: int) -> float:
    return 97.0 if f"scratch-OST{index:04X}" == FULLEST else 20.0 + (index * 37) % 60


def _write_rack(now: float) -> None:
    """Two sensor rounds of 2,400 OSTs: varied fills, every OSS moving 1 GB per OST but
    BUSIEST, which moves 5."""
    lines = []
    for round_index, moment in enumerate((now - 20, now - 10), start=1):
        stamp = int(moment)
        for number in range(1, SERVERS + 1):
            host = _server(number)
            per_ost = (5 if host == BUSIEST else 1) * 10**9
            for slot in range(OSTS_PER_SERVER):
                index = (number - 1) * OSTS_PER_SERVER + slot
                free = int(TOTAL_KB * (1 - _fill(index) / 100))
                lines.append(
                    f"ost,fs=scratch,target=OST{index:04X},server={host} "
                    f"read_bytes={per_ost * round_index // 2}i,"
                    f"write_bytes={per_ost * round_index // 2}i,"
                    f"kbytes_total={TOTAL_KB}i,kbytes_free={free}i,kbytes_avail={free}i {stamp}"
                )
    influx.client().write_points(lines, protocol="line", time_precision="s", batch_size=5000)


@pytest.fixture
def big_rack(rack_inventory, metrics_db):
    _write_rack(time.time())


def test_the_capacity_of_2400_osts_shows_the_fullest_and_the_others_together(
    client, world, big_rack
):
    body = login(client, "viewer").get("/health/charts/capacity/?kind=filesystem&name=scratch")
    body = body.json()
    osts, others, total = body["osts"], body["others"], body["total"]
    assert len(osts) == SHOWN
    assert osts[0]["label"] == FULLEST and osts[0]["fill_percent"] == 97.0
    assert osts[0]["url"] == f"/health/targets/{FULLEST}/"
    fills = [ost["fill_percent"] for ost in osts]
    assert fills == sorted(fills, reverse=True)
    every_fill = sorted(_fill(index) for index in range(SERVERS * OSTS_PER_SERVER))
    assert fills == every_fill[::-1][:SHOWN]
    # The others together: with the shown ones they are the whole filesystem.
    assert others["count"] == SERVERS * OSTS_PER_SERVER - SHOWN
    assert total["count"] == SERVERS * OSTS_PER_SERVER
    assert sum(o["used_tb"] for o in osts) + others["used_tb"] == pytest.approx(
        total["used_tb"], abs=0.01
    )
    assert sum(o["avail_tb"] for o in osts) + others["avail_tb"] == pytest.approx(
        total["avail_tb"], abs=0.01
    )
    assert total["fill_percent"] == pytest.approx(sum(every_fill) / len(every_fill), abs=0.01)
    assert (total["min_percent"], total["max_percent"]) == (20.0, 97.0)
    assert total["spread_percent"] == 77.0


def test_the_share_of_200_osss_shows_the_busiest_and_the_others_together(client, world, big_rack):
    body = login(client, "viewer").get("/health/charts/oss-share/?kind=filesystem&name=scratch")
    body = body.json()
    servers, others = body["servers"], body["others"]
    assert len(servers) == SHOWN and body["count"] == SERVERS
    assert servers[0]["server"] == BUSIEST and servers[0]["url"] == f"/health/servers/{BUSIEST}/"
    # 12 OSTs of 1 GB moved (0.5 read, 0.5 written) per OSS, 5 GB on the busiest.
    assert body["total_gb"] == pytest.approx(12 * (SERVERS - 1 + 5), rel=1e-6)
    moved = sum(s["read_gb"] + s["write_gb"] for s in servers)
    assert moved + others["read_gb"] + others["write_gb"] == pytest.approx(body["total_gb"])
    assert others["count"] == SERVERS - SHOWN
    shares = sum(s["share_percent"] for s in servers) + others["share_percent"]
    assert shares == pytest.approx(100, abs=0.1)  # each share rounded to 0.01
    assert others["mean_share_percent"] == pytest.approx(100 / (SERVERS + 4), abs=0.01)
    assert body["imbalance"] == pytest.approx(
        servers[0]["share_percent"] / (100 / SERVERS), abs=0.01
    )


def test_choosing_an_ssu_shows_its_own_osts_and_osss_all_of_them(client, world, big_rack):
    login(client, "viewer")
    capacity = client.get("/health/charts/capacity/?kind=ssu&name=ssu01").json()
    labels = [ost["label"] for ost in capacity["osts"]]
    assert labels == [f"scratch-OST{index:04X}" for index in range(2 * OSTS_PER_SERVER)]
    assert capacity["others"] is None and capacity["total"]["count"] == 24
    share = client.get("/health/charts/oss-share/?kind=ssu&name=ssu01").json()
    assert [s["server"] for s in share["servers"]] == ["oss01", "oss02"]
    assert share["others"] is None
    assert [s["share_percent"] for s in share["servers"]] == [50.0, 50.0]


def test_the_dashboard_offers_each_ssu_as_the_scope_of_its_charts(client, world, rack_inventory):
    from portal.inventory.provisioned import mark_provisioned
    from portal.inventory.services import save_plans

    second = second_ssu(load_spec("reference_ssu"), first_ost_index=24)
    mark_provisioned(save_plans([second]))
    page = login(client, "viewer").get("/").content.decode()
    assert '<select data-scope aria-label="Chart scope">' in page
    assert '<option value="ssu:ssu02" data-url="/health/ssus/ssu02/">SSU ssu02</option>' in page
    assert page.count("data-scoped") == 3
