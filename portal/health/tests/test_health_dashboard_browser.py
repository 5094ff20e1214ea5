"""A person watching the dashboard in Chromium while a virtual rack, its sensors, Celery beat and
a Celery worker run for real: all green; a drive fails; three drives of one group fail; an OSS
crashes. An operator mends it from the console: fails the OSS back from its page once it is
repaired (refused while it is down), and replaces a failed drive (locate, swap, watch the
reconstruction). The page refreshes itself; a screenshot of each state is kept with the test
results. The viewer sees no act anywhere."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from portal import influxdb as influx
from portal.conftest import celery_beat
from portal.health.tests.conftest import SENSOR_INTERVAL, reference_rack, virtual_rack_thresholds
from simulator import failures
from simulator.rack import Rack

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.rack(seconds=170),
]

EVALUATE_SECONDS = 2
REFRESH_SECONDS = 1
# Two sensor rounds, then the next evaluation and the next refresh of the page, plus slack for
# a 2-core machine running all of it.
WITHIN = 2 * SENSOR_INTERVAL + EVALUATE_SECONDS + REFRESH_SECONDS + 4


FINISHED = ", ".join(
    f'#job-progress section.job[data-state="{state}"]'
    for state in ("succeeded", "failed", "errored", "interrupted")
)


def wait_for_job_end(page, seconds: int = 180) -> None:
    """Wait until the job on the page has ended; if it did not succeed, say its state and why."""
    try:
        page.wait_for_selector(FINISHED, timeout=seconds * 1000)
    except PlaywrightTimeout:
        raise AssertionError(
            f"the job had not ended after {seconds} s: {page.locator('#job-progress').inner_text()}"
        ) from None
    job = page.locator("#job-progress")
    state = job.locator("section.job").get_attribute("data-state")
    assert state == "succeeded", f"the job ended {state}: {job.inner_text()}"


@pytest.fixture
def health_beat(celery_worker, tmp_path):
    """Celery beat with the portal's schedule: health.evaluate every EVALUATE_SECONDS."""
    with celery_beat(
        tmp_path / "beat-schedule", OSTARA_HEALTH_EVALUATE_SECONDS=str(EVALUATE_SECONDS)
    ) as process:
        yield process


@pytest.fixture
def metrics_of_the_worker(services):
    """The worker reads the profile's database: start it empty."""
    influx.client().drop_database(settings.INFLUXDB_DATABASE)
    influx.ensure_database()
    return settings.INFLUXDB_DATABASE


@pytest.fixture
def virtual_rack(worker_rack):
    """The reference rack where the Celery worker's playbooks act: the console's jobs fail back
    and replace drives on the rack the page watches."""
    rack = reference_rack(worker_rack)
    with Rack.open(rack.root) as opened:
        opened.state["rebuild_seconds"] = 40  # a drive's reconstruction, watched in full
    yield rack
    rack.stop()


@pytest.fixture
def operator(browser, live_server, world):
    """A second browser, the operator's, logged in."""
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", "pw-operator-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    yield page
    context.close()


def open_until(page, url: str, selector: str, seconds: float):
    """Open `url` again until `selector` is on it (what changes comes from the sensors)."""
    deadline = time.monotonic() + seconds
    while True:
        page.goto(url)
        # An act page loads its answer in place once Pacemaker has worked it out.
        page.wait_for_selector("#what-if-pending", state="detached", timeout=60_000)
        if page.locator(selector).count():
            return page.locator(selector)
        if time.monotonic() > deadline:
            text = page.locator("main").inner_text()[:1500]
            raise AssertionError(f"after {seconds:.0f} s {url} has no {selector}:\n{text}")
        page.wait_for_timeout(2000)


def status_of(page, kind: str, name: str) -> str | None:
    cell = page.locator(f'#overview-panel [data-kind="{kind}"][data-name="{name}"]').first
    return cell.get_attribute("data-status") if cell.count() else None


def wait_for_colours(page, expected: dict[tuple[str, str], str], seconds: float = WITHIN):
    deadline = time.monotonic() + seconds
    while True:
        found = {}
        for kind, name in expected:
            if kind == "filesystem":
                found[(kind, name)] = page.locator("#fs-status").get_attribute("data-status")
            else:
                found[(kind, name)] = status_of(page, kind, name)
        if found == expected:
            return
        if time.monotonic() > deadline:
            why = page.locator("#overview-panel").inner_text()[:1500]
            raise AssertionError(
                f"after {seconds:.0f} s the page shows {found}, not {expected}:\n{why}"
            )
        page.wait_for_timeout(300)


def wait_for_chart(page, chart: str, seconds: float, errors: list[str]) -> None:
    try:
        page.wait_for_selector(f'[data-chart="{chart}"] .uplot', timeout=seconds * 1000)
    except Exception:
        html = page.locator(f'[data-chart="{chart}"]').first.inner_html()
        raise AssertionError(f"{chart} chart: {html!r}; page errors: {errors}") from None


def test_the_dashboard_follows_failures_and_the_console_mends_them(
    live_server,
    world,
    page,
    operator,
    screenshot_dir,
    virtual_rack,
    metrics_of_the_worker,
    health_beat,
    settings,
    tmp_path,
):
    settings.HEALTH_REFRESH_SECONDS = REFRESH_SECONDS
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    virtual_rack.start(settings.INFLUXDB_URL, metrics_of_the_worker, tmp_path / "spool")

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/?next=/")
    page.fill("#id_username", "viewer")
    page.fill("#id_password", "pw-viewer-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")

    # All green at first.
    wait_for_colours(page, {("filesystem", "scratch"): "green"}, seconds=WITHIN + 20)
    cells = page.locator('#overview-panel .ssu-tile[data-name="ssu01"] [data-kind="target"]')
    assert cells.count() == 24
    assert set(cells.evaluate_all("cells => cells.map(c => c.dataset.status)")) == {"green"}
    assert page.locator("#error-count").inner_text().startswith("0 errors · 0 warnings")
    # The charts draw from InfluxDB: capacity at once, throughput once two steps of rates exist.
    page.select_option("select[data-range]", "15m")
    for chart, seconds in (("capacity", 20), ("share", 40), ("timeseries", 40)):
        wait_for_chart(page, chart, seconds, errors)
    page.screenshot(path=str(screenshot_dir / "health-1-all-green.png"), full_page=True)

    # One failed drive: that OST orange, and hovering it tells the drive and the volume group.
    virtual_rack.inject("drive-failed", array="ssu01-a", drive="0,2,5")
    wait_for_colours(
        page,
        {("target", "scratch-OST0002"): "orange", ("filesystem", "scratch"): "orange"},
    )
    cell = page.locator('#overview-panel [data-kind="target"][data-name="scratch-OST0002"]')
    cell.hover()
    reason = cell.get_attribute("title")
    assert "volume group ssu01-a-vg02 is degraded: drive ssu01-a-e0 drawer 2 slot 5 failed" in (
        reason
    )
    assert status_of(page, "target", "scratch-OST0000") == "green"
    page.screenshot(path=str(screenshot_dir / "health-2-drive-failed.png"), full_page=True)

    # A click tells why: the target's page with its reasons, charts and history.
    cell.click()
    page.wait_for_url(f"{live_server.url}/health/targets/scratch-OST0002/")
    assert page.locator("#object-status").get_attribute("data-status") == "orange"
    assert "drive ssu01-a-e0 drawer 2 slot 5 failed" in page.locator(".reasons").inner_text()
    wait_for_chart(page, "histogram", 20, errors)
    page.screenshot(path=str(screenshot_dir / "health-2b-target-drill-down.png"), full_page=True)
    page.goto(f"{live_server.url}/")

    # Three failed drives in one group: the OST and the filesystem red.
    virtual_rack.clear_all()
    virtual_rack.inject("drive-failed", array="ssu01-a", volume_group="ssu01-a-vg03", count=3)
    wait_for_colours(page, {("target", "scratch-OST0003"): "red", ("filesystem", "scratch"): "red"})
    # Red first for whichever report came first: the OST stopped by Pacemaker (its server's
    # sensor) or its group failed (the array collector); the cause follows within rounds.
    reasons = page.locator("#overview-panel .reasons").first
    deadline = time.monotonic() + WITHIN
    while "lost" not in reasons.inner_text():
        assert time.monotonic() < deadline, reasons.inner_text()
        page.wait_for_timeout(300)
    page.screenshot(path=str(screenshot_dir / "health-3-three-drives-failed.png"), full_page=True)

    # Repaired and failed back; then oss01 crashes: red, its OSTs orange on oss02, SSU orange.
    virtual_rack.clear_all()
    virtual_rack.fail_back()
    wait_for_colours(page, {("filesystem", "scratch"): "green"}, seconds=WITHIN + 10)
    virtual_rack.inject("server-crash", server="oss01")
    expected = {("server", "oss01"): "red", ("ssu", "ssu01"): "orange"}
    expected.update({("target", f"scratch-OST{i:04x}"): "orange" for i in range(0, 24, 2)})
    wait_for_colours(page, expected)
    assert status_of(page, "server", "oss02") != "red"
    assert status_of(page, "target", "scratch-OST0001") == "green"
    page.screenshot(path=str(screenshot_dir / "health-4-oss-crash.png"), full_page=True)

    # The viewer sees what happened, and no act to take.
    page.goto(f"{live_server.url}/health/servers/oss01/")
    assert page.locator("#server-actions a").count() == 0
    page.goto(f"{live_server.url}/")

    # The operator wants it back at once: refused, with the reason.
    url = live_server.url

    def shot(page, name: str) -> None:
        page.screenshot(path=str(screenshot_dir / f"{name}.png"), full_page=True)

    operator.goto(f"{url}/health/servers/oss01/")
    operator.click('#server-actions a[data-act="failback"]')
    refused = operator.locator("#act-refused").inner_text(timeout=60_000)
    assert "oss01 is not online in its cluster" in refused
    shot(operator, "console-1-failback-refused")

    # Repaired, it rejoins; its targets stay on oss02 until the operator fails it back: the
    # confirmation shows Pacemaker's what-if, the job moves the 12 targets home.
    virtual_rack.clear_all()
    moves = open_until(operator, f"{url}/console/servers/oss01/failback/", "#what-if-moves li", 90)
    assert moves.count() == 12
    assert "scratch-OST0000: oss02 → oss01" in operator.locator("#what-if-moves").inner_text()
    shot(operator, "console-2-failback-what-if")
    operator.click("#confirm-act")
    wait_for_job_end(operator)
    assert "12 targets home" in operator.locator("#job-outcome").inner_text()
    shot(operator, "console-3-failback-done")
    wait_for_colours(page, {("filesystem", "scratch"): "green"}, seconds=WITHIN + 10)
    changes = page.locator("#overview-panel table.changes").inner_text()
    assert "scratch-OST0002" in changes or "oss01" in changes
    page.screenshot(path=str(screenshot_dir / "health-5-all-green-again.png"), full_page=True)
    operator.goto(f"{url}/console/audit/")
    entry = operator.locator('#audit-table tr[data-act="failback"]').first.inner_text()
    assert "operator" in entry and "oss01" in entry and "succeeded" in entry.lower()
    shot(operator, "console-4-audit")

    # A drive fails. The array page shows it; the viewer can look but not act.
    virtual_rack.inject("drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00", count=1)
    wait_for_colours(page, {("target", "scratch-OST0000"): "orange"})
    link = open_until(page, f"{url}/console/arrays/ssu01-a/", "td.drive.failed a", WITHIN)
    address = link.locator("xpath=..").get_attribute("data-drive")
    link.click()
    page.locator("#replacement-steps").wait_for()  # the drive's page, not the array's
    assert page.locator("#replacement-steps button").count() == 0
    page.goto(f"{url}/")

    # The operator blinks its locate LED, swaps it, says so, and watches the reconstruction.
    operator.goto(f"{url}/console/arrays/ssu01-a/")
    shot(operator, "console-5-array-drive-failed")
    operator.click(f'td[data-drive="{address}"] a')
    operator.click("#locate-drive")
    operator.wait_for_selector('#replacement-steps[data-state="locating"]', timeout=60_000)
    with Rack.open(virtual_rack.root) as rack:  # the technician's act in the machine room
        failures.replace_drive(rack, "ssu01-a", address)
        rack.render()
    operator.click("#drive-replaced")
    operator.wait_for_selector("#reconstruction", timeout=60_000)
    operator.wait_for_function(
        "() => parseInt(document.querySelector('#reconstruction-percent')?.textContent) > 0",
        timeout=60_000,
    )
    shot(operator, "console-6-reconstruction")
    operator.wait_for_selector("#replacement-done", timeout=120_000)
    shot(operator, "console-7-drive-replaced")
    wait_for_colours(
        page, {("target", "scratch-OST0000"): "green", ("filesystem", "scratch"): "green"}
    )
