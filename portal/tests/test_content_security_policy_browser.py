"""Chromium enforces the portal's Content-Security-Policy on every main page, as an administrator
sees them, and reports nothing it refused: no inline script or style, no eval. The pages still
work under it: charts draw, htmx refreshes its panels, Swagger UI lists the API."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from email.utils import formatdate

import pytest

from portal.health.tests.conftest import (  # noqa: F401 (fixtures)
    evaluated_rack,
    metrics_db,
    rack_inventory,
)
from portal.web.content_security_policy import POLICY

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    # A healthy rack's two sensor rounds, evaluated: the charts have data to draw.
    pytest.mark.usefixtures("evaluated_rack"),
]

# The main pages, each with what shows that it works (a CSS selector that must become visible).
PAGES = [
    ("/", ".chart canvas"),
    ("/ssus/", "main h1"),
    ("/ssus/ssu01/", "main h1"),
    ("/health/ssus/ssu01/", ".chart canvas"),
    ("/health/servers/oss01/", ".chart canvas"),
    ("/jobs/", "main h1"),
    ("/alerts/", "main h1"),
    ("/alerts/rules/", "main h1"),
    ("/alerts/silences/", "main h1"),
    ("/alerts/history/", "main h1"),
    ("/analytics/", "main h1"),
    ("/analytics/load/", "main h1"),
    ("/analytics/fill/", ".chart canvas"),
    ("/usage/", "main h1"),
    ("/usage/names/", "main form"),
    ("/health/targets/scratch-OST0000/", "#target-owners"),
    ("/surveys/", "main h1"),
    ("/console/parameters/", "main h1"),
    ("/console/audit/", "main h1"),
    ("/health/thresholds/", "main form"),
    ("/alerts/settings/mail/", "main form"),
    ("/analytics/settings/", "main form"),
    ("/health/retention/", "main form"),
    ("/ssus/add/", "main form"),
    ("/accounts/password/", "main form"),
    ("/api/docs/", ".swagger-ui .opblock"),
    ("/admin/", "#content"),
    ("/admin/auth/user/", "#result_list"),
    ("/admin/auth/user/{admin}/change/", "#user_form"),
    ("/admin/auth/user/add/", "#user_form"),
]

# Reported by the page itself, before any of its scripts run: CSP's violation events.
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(
    `${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
});
"""

HEAT = """Array.from(document.querySelectorAll("a.heat")).map(
  (cell) => [cell.dataset.heat, getComputedStyle(cell).getPropertyValue("--heat").trim()])"""


@pytest.fixture
def caught_alert_mail(settings, tmp_path) -> str:
    """An alert mail as the demo's mail catcher keeps it: HTML styled inline, as mail is."""
    settings.OSTARA_CAUGHT_MAIL_DIR = str(tmp_path / "mail")
    message = EmailMessage()
    message["Subject"], message["To"] = "[Ostara] CRITICAL: oss01 is red", "ops@example.org"
    message["Date"] = formatdate()
    message.set_content("oss01 is red")
    message.add_alternative(
        '<html><body><h2 style="color: #c62828">oss01 is red</h2></body></html>', subtype="html"
    )
    return mailbox.Maildir(tmp_path / "mail").add(message)


@pytest.fixture
def watched_page(page):
    """The page, with every refusal Chromium reports (console and violation events) kept."""
    refused: list[str] = []
    page.add_init_script(LISTEN)
    page.on(
        "console",
        lambda message: (
            refused.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text or message.text.startswith("Refused to")
            else None
        ),
    )
    return page, refused


def sign_in(page, url: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "pw-admin-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def test_every_main_page_keeps_the_policy_and_still_works(
    live_server, world, watched_page, caught_alert_mail
):
    page, refused = watched_page
    response = page.goto(f"{live_server.url}/accounts/login/")
    assert response.headers["content-security-policy"] == POLICY
    sign_in(page, live_server.url)

    violations = []
    for path, working in PAGES:
        path = path.format(admin=world["admin"].pk)
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        page.locator(working).first.wait_for(state="visible", timeout=15_000)
        violations += [f"{path}: {v}" for v in page.evaluate("window.__violations")]
    assert violations == []
    assert refused == []

    # A caught mail keeps its inline styles, in a frame under a policy of its own.
    page.goto(f"{live_server.url}/alerts/settings/mail/caught/{caught_alert_mail}/")
    heading = page.frame_locator("iframe.mail-preview").locator("h2")
    assert heading.evaluate("(h2) => getComputedStyle(h2).color") == "rgb(198, 40, 40)"
    assert page.evaluate("window.__violations") == []
    assert refused == []

    # The heat map's cells are coloured from their data-heat level, not a style attribute.
    page.goto(f"{live_server.url}/analytics/load/")
    cells = page.evaluate(HEAT)
    assert cells
    assert all(level == style for level, style in cells)


def test_htmx_refreshes_the_dashboard_under_the_policy(live_server, world, watched_page):
    page, refused = watched_page
    sign_in(page, live_server.url)
    # The service tiles load by htmx after the page, then every 15 s; the health overview
    # refreshes on its own period.
    with page.expect_response(lambda r: "/health/overview/" in r.url, timeout=30_000):
        page.goto(f"{live_server.url}/")
    assert page.locator("#service-panel .tile", has_text="influxdb").is_visible()
    # htmx's indicator style comes from the stylesheet, not from a <style> it injects.
    assert page.locator("style").count() == 0
    assert page.evaluate("window.__violations") == []
    assert refused == []
