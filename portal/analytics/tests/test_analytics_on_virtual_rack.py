"""Analytics on a clustered virtual rack whose servers run the product's sensor agent, seen
through the API and in Chromium (screenshots kept with the test results):

- a balanced workload: no OSS overloaded, no job flagged, no fill skew;
- one OSS made hot (an OST pool on it takes the big jobs): the API and the load page name it
  as overloaded and name a job of the pool as the cause; a heat-map cell opens its jobs;
- a large file written with stripe count 1: flagged with a stripe-count advice;
- the offline report of a dump of the rack's points gives the API's numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from portal import influxdb as influx
from portal.analytics.tests.conftest import rounded
from portal.health.tests.conftest import SENSOR_INTERVAL
from sensors import schema
from sensors.lineproto import line, series
from simulator.rack import Rack

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.rack(seconds=190),
]

REPO = Path(__file__).resolve().parents[3]
PHASE_ROUNDS = 10  # sensor rounds each workload runs before it is analysed
SETTLE_ROUNDS = 2  # rounds left out at the start of a phase: the old jobs' last bytes


def workload(rack, *args) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "workload", "--rack", str(rack.root), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def phase(rack, *args) -> tuple[int, int]:
    """Run a workload (with no ``args``: the one as it is) for PHASE_ROUNDS; the window to
    analyse (its settled part)."""
    if args:
        workload(rack, *args)
    start = time.time()
    rack.wait_rounds(PHASE_ROUNDS)
    until = int(time.time())
    written_past(until)
    return int(start + SETTLE_ROUNDS * SENSOR_INTERVAL), until


def written_past(until: int, timeout: float = 60.0) -> None:
    """Wait until every OSS has written a point newer than ``until``: then the window's own
    points are all in InfluxDB, and the API and a later dump read the same ones."""
    statement = (
        f"SELECT last(write_ios) FROM {schema.BRW.name} "
        f"WHERE time > {until}s GROUP BY {schema.SERVER}"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        servers = {point[schema.SERVER] for point in influx.query_tagged([statement])[0]}
        if {"oss01", "oss02"} <= servers:
            return
        time.sleep(0.5)
    raise AssertionError(f"no points past {until} from both OSSs after {timeout:.0f} s")


def report(client, since: int, until: int) -> dict:
    answer = client.get(f"/api/v1/analytics/report/?since={since}&until={until}")
    assert answer.status_code == 200, answer.content
    return answer.json()


def jobs_on(rack) -> dict[str, list[str]]:
    with Rack.open(rack.root, save_counters=False) as state:
        servers = {label: t.get("mounted_on") for label, t in state.state["targets"].items()}
        return {
            job_id: sorted({servers[label] for label in job["osts"]})
            for job_id, job in state.state["jobs"].items()
        }


def dump(path: Path, since: int, until: int) -> None:
    """The rack's points of the window as line protocol, as an export of InfluxDB gives them."""
    lines = []
    for measurement in (schema.OST, schema.OST_JOB, schema.BRW):
        statement = f"SELECT * FROM {measurement.name} WHERE time >= {since}s AND time <= {until}s"
        for point in influx.query_tagged([statement], epoch="ns")[0]:
            tags = {t: point[t] for t in measurement.tags if point.get(t)}
            fields = {
                k: v
                for k, v in point.items()
                if k != "time"
                and k not in measurement.tags
                and k not in ("ssu", "pair")
                and v is not None
            }
            lines.append(line(series(measurement.name, tags), fields, point["time"]))
    path.write_text("\n".join(lines) + "\n")


def test_analytics_on_a_virtual_rack(
    virtual_rack, metrics_db, client, world, live_server, page, screenshot_dir, tmp_path
):
    virtual_rack.save_inventory()
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")

    # Balanced: nothing to say.
    balanced = report(client, *phase(virtual_rack, "balanced"))
    assert {row["server"] for row in balanced["oss"]} == {"oss01", "oss02"}
    assert balanced["overloaded"] == [], balanced["oss"]
    assert balanced["striping"] == []
    assert balanced["ost_fill"]["flagged"] is False
    assert balanced["imbalance"]["max_over_mean"] < 1.2

    # oss01 made to carry about twice oss02's load: a job striped over every OST at 1600 MiB/s
    # (800 on each OSS) and one on an OST pool of oss01 alone at 1000 MiB/s: 1800 against
    # 800, well below what the servers can move. Named, since when, and the pool's job as
    # the cause.
    workload(virtual_rack, "idle")
    workload(virtual_rack, "job", "--stripe-count", "-1", "--size", "20T", "--rate", "1600M")
    started = workload(
        virtual_rack,
        *("job", "--server", "oss01", "--stripe-count", "12", "--size", "20T"),
        *("--rate", "1000M"),
    )
    pool_job = started.split(":")[0].removeprefix("job ")
    hot_window = phase(virtual_rack)
    hot = report(client, *hot_window)
    shares = {row["server"]: row["share"] for row in hot["oss"]}
    print(f"shares with the pool job: {shares}")
    assert hot["overloaded"] == ["oss01"]
    assert 1.8 < shares["oss01"] / shares["oss02"] < 2.7
    (detail,) = hot["overloaded_detail"]
    assert detail["since"] is not None
    cause = detail["top_jobs"][0]["jobid"]
    assert cause == pool_job
    assert jobs_on(virtual_rack)[cause] == ["oss01"]

    # The same numbers from a dump of the rack's points, offline.
    dump(tmp_path / "rack.lp", *hot_window)
    offline = subprocess.run(
        [sys.executable, "-m", "portal.analytics.report", str(tmp_path / "rack.lp")],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    local = json.loads(offline.stdout)
    for key in ("imbalance", "overloaded", "striping", "io_size"):
        # A file does not say which SSU a server is in.
        assert rounded(local[key]) == rounded(hot[key], leave_out=("per_ssu",)), key
    assert rounded(local["oss"]) == rounded(
        [{k: row[k] for k in ("server", "bytes", "share")} for row in hot["oss"]]
    )
    assert local["ost_fill"]["spread_points"] == hot["ost_fill"]["spread_points"]

    url = live_server.url
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", "viewer")
    page.fill("#id_password", "pw-viewer-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Analytics").click()
    page.fill("input[name=since]", f"{hot_window[0]:.0f}")
    page.fill("input[name=until]", f"{hot_window[1]:.0f}")
    page.select_option("select[name=window]", "")
    page.get_by_role("button", name="Show").click()
    finding = page.locator("[data-finding=overloaded]")
    assert "oss01" in finding.inner_text() and cause in finding.inner_text()
    page.locator("[data-chart=bars] canvas").first.wait_for()
    page.screenshot(path=str(screenshot_dir / "analytics-1-load.png"), full_page=True)
    # The hottest cell of the OSS heat map opens the jobs behind it.
    cells = page.locator("table.heatmap[data-heatmap=server] a.heat")
    levels = cells.evaluate_all(
        "cells => cells.map(c => parseFloat(c.style.getPropertyValue('--heat')))"
    )
    cells.nth(levels.index(max(levels))).click()
    page.locator("#cell-jobs table").wait_for()
    assert "oss01" in page.locator("#cell-jobs").inner_text()
    assert pool_job in page.locator("#cell-jobs").inner_text()
    page.get_by_role("columnheader", name="Bytes").first.click()  # sortable
    page.screenshot(path=str(screenshot_dir / "analytics-2-cell-jobs.png"), full_page=True)

    # A large file with stripe count 1, on its own (beside busy jobs its one OST would be
    # shared, and it would move too little in a test's minute to be worth flagging).
    workload(virtual_rack, "idle")
    narrow = workload(virtual_rack, "job", "--stripe-count", "1", "--size", "2T", "--rate", "400M")
    job_id = narrow.split(":")[0].removeprefix("job ")
    striping_since = int(time.time())
    virtual_rack.wait_rounds(PHASE_ROUNDS)
    striping = report(client, striping_since, int(time.time()))
    flagged = {row["jobid"]: row for row in striping["striping"]}
    assert set(flagged) == {job_id}, striping["striping"]
    assert flagged[job_id]["osts"] == 1 and flagged[job_id]["stripe_count"] > 1
    assert f"lfs setstripe -c {flagged[job_id]['stripe_count']}" in flagged[job_id]["advice"]
    page.goto(f"{url}/analytics/striping/?since={striping_since}")
    assert job_id in page.locator("#striping-table").inner_text()
    page.screenshot(path=str(screenshot_dir / "analytics-3-striping.png"), full_page=True)
    for name in ("fill", "access", "capacity"):
        page.get_by_role("navigation", name="Analytics").get_by_role("link").filter(
            has_text={"fill": "OST fill", "access": "Access", "capacity": "Capacity"}[name]
        ).click()
        page.screenshot(path=str(screenshot_dir / f"analytics-4-{name}.png"), full_page=True)
