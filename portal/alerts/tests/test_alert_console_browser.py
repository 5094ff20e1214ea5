"""The alert console in Chromium: an operator writes a threshold rule on OST fill, sees what it
would have done over the last day, saves it, and sees its alert on the dashboard; a viewer reads
the rules and cannot change them. The metrics are real points in the test InfluxDB."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from portal import influxdb as influx
from portal.alerts.models import Event, Rule
from portal.alerts.services.evaluation import evaluate_round
from portal.health.models import HealthStatus

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

TOTAL_KB = 100_000_000
# (target, server, % available over the last hour): OST0003 fills up half an hour ago.
OSTS = [("OST0000", "oss01", 60.0), ("OST0001", "oss02", 55.0), ("OST0003", "oss02", None)]


@pytest.fixture
def filling_rack(services, settings):
    """An hour of capacity points for three OSTs, one of which runs nearly full for the last
    half hour; and their health rows, so the alert links to the OST."""
    settings.INFLUXDB_DATABASE = f"alerts_{uuid.uuid4().hex[:10]}"
    influx.ensure_database()
    now = int(time.time())
    lines = []
    for target, server, avail in OSTS:
        for t in range(now - 3600, now + 300, 10):  # into the test's next minutes
            percent = avail if avail is not None else (40.0 if t < now - 1800 else 4.0)
            lines.append(
                f"ost,fs=scratch,target={target},server={server} "
                f"kbytes_total={TOTAL_KB}i,kbytes_avail={int(TOTAL_KB * percent / 100)}i {t}"
            )
    influx.write_lines(lines)
    for pk, (target, _, _) in enumerate(OSTS, start=1):
        HealthStatus.objects.create(
            key=f"target:{pk}",
            kind="target",
            name=f"scratch-{target}",
            status="green",
            since="2026-01-01T00:00:00Z",
        )
    yield
    influx.client().drop_database(settings.INFLUXDB_DATABASE)


def sign_in(page, url: str, who: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", who)
    page.fill("#id_password", f"pw-{who}-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def test_an_operator_writes_backtests_and_saves_a_threshold_rule(
    live_server, world, filling_rack, page, screenshot_dir
):
    url = live_server.url
    sign_in(page, url, "operator")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Alerts").click()
    page.get_by_role("link", name="Rules", exact=True).click()
    page.get_by_role("link", name="New rule").click()

    page.fill("#id_name", "OST nearly full")
    page.select_option("#id_severity", "critical")
    page.select_option("#id_condition", "threshold")
    page.select_option("#id_measurement", "ost")
    page.fill("#id_field", "kbytes_avail")
    page.fill("#id_percent_of", "kbytes_total")
    page.select_option("#id_comparison", "<")
    page.fill("#id_threshold", "10")
    page.fill("#id_for_seconds", "-5")
    page.fill("#id_extra_addresses", "ops@example.org")
    page.get_by_role("button", name="Backtest").click()
    # A negative duration is refused at its field, and nothing is saved.
    assert "cannot be negative" in page.locator("#id_for_seconds-error").inner_text()
    assert not Rule.objects.filter(name="OST nearly full").exists()

    page.fill("#id_for_seconds", "60")
    page.get_by_role("button", name="Backtest").click()
    backtest = page.locator("#backtest")
    assert "1 event" in backtest.inner_text()
    assert "scratch-OST0003" in backtest.inner_text()
    assert "scratch-OST0000" not in backtest.inner_text()
    page.screenshot(path=str(screenshot_dir / "alerts-1-backtest.png"), full_page=True)
    assert not Rule.objects.filter(name="OST nearly full").exists()  # a backtest saves nothing

    page.get_by_role("button", name="Save").click()
    page.wait_for_url(f"{url}/alerts/rules/")
    assert page.get_by_role("link", name="OST nearly full").is_visible()

    # What beat runs after each health evaluation: pending at first, firing once its minute
    # has passed.
    evaluate_round()
    assert Event.objects.get(rule__name="OST nearly full").status == "pending"
    evaluate_round(timezone.now() + timedelta(seconds=61))
    event = Event.objects.get(rule__name="OST nearly full")
    assert event.status == "firing" and event.object_label.startswith("scratch-OST0003")

    page.goto(f"{url}/")
    panel = page.locator("#alerts-panel")
    panel.get_by_text("OST nearly full").wait_for()
    assert "scratch-OST0003" in panel.inner_text()
    assert "kbytes_avail at 4.0 % of kbytes_total (< 10)" in panel.inner_text()
    page.screenshot(path=str(screenshot_dir / "alerts-2-dashboard.png"), full_page=True)


def test_a_viewer_reads_the_rules_and_cannot_change_them(live_server, world, page):
    # A default rule; an earlier transactional test may have flushed the defaults.
    Rule.objects.get_or_create(
        name="Anything red",
        defaults={"severity": "critical", "condition": "health", "health_state": "red"},
    )
    url = live_server.url
    sign_in(page, url, "viewer")
    page.goto(f"{url}/alerts/rules/")
    assert page.get_by_role("link", name="Anything red").is_visible()
    assert page.get_by_role("link", name="New rule").count() == 0
    page.get_by_role("link", name="Anything red").click()
    assert page.locator("#id_name").is_disabled()
    assert page.get_by_role("button", name="Save").count() == 0
    # And the server refuses what the page does not offer (with a valid CSRF token, so the
    # refusal is the role's).
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    answer = page.request.post(
        f"{url}/alerts/rules/new/",
        form={
            "csrfmiddlewaretoken": token,
            "name": "sneaky",
            "severity": "warning",
            "condition": "health",
            "health_state": "red",
            "scope": "all",
            "for_seconds": "0",
            "clear_seconds": "0",
            "repeat_seconds": "0",
            "save": "1",
        },
        headers={"Referer": f"{url}/alerts/rules/new/"},
    )
    assert answer.status == 403
    assert not Rule.objects.filter(name="sneaky").exists()
