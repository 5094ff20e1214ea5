"""A person in Chromium: sent to the login page, signs in, sees the dashboard."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_and_see_the_dashboard(live_server, world, page, screenshot_dir, services):
    page.goto(f"{live_server.url}/")
    assert page.url == f"{live_server.url}/accounts/login/?next=/"
    page.fill("#id_username", "operator")
    page.fill("#id_password", "pw-operator-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator("h1").inner_text() == "Dashboard"
    assert page.get_by_role("navigation", name="Main").get_by_text("SSUs").is_visible()
    # The service tiles show the real services; InfluxDB and Redis are up in the test profile.
    assert "up" in page.locator(".tile", has_text="influxdb").inner_text()
    page.screenshot(path=str(screenshot_dir / "dashboard-after-login.png"), full_page=True)


def test_a_wrong_password_is_refused_with_a_message(live_server, world, page):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", "not-the-password")
    page.click("button[type=submit]")
    assert page.get_by_role("alert").inner_text().startswith("Your user name and password")
    assert "/accounts/login/" in page.url
