"""The busiest clients in Chromium: a server's and a target's page show at once, then fetch
their busiest clients (an hour of per-export stats, seconds of InfluxDB's time on a big rack)
and put them in place of the "Reading ..." line."""

from __future__ import annotations

import pytest

from portal.health.tests.test_busiest_clients import exports  # noqa: F401 (a fixture)
from portal.tests.test_content_security_policy_browser import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_pages_fill_in_their_busiest_clients(
    page,
    live_server,
    world,
    exports,  # noqa: F811
    screenshot_dir,
):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, live_server.url)
    for path, expected in (
        ("/health/targets/scratch-OST0003/", ["169.254.7.20@tcp", "169.254.7.21@tcp"]),
        ("/health/servers/oss01/", ["169.254.7.20@tcp", "169.254.7.22@tcp"]),
    ):
        page.goto(f"{live_server.url}{path}")
        rows = page.locator("#busiest-clients tbody tr")
        rows.first.wait_for(timeout=30_000)
        assert [rows.nth(n).get_attribute("data-client") for n in range(rows.count())] == expected
        assert page.locator("#busiest-clients").count() == 1  # the placeholder replaced
    page.locator("#busiest-clients").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "busiest-clients-server.png"), full_page=True)
    assert errors == []


def test_a_list_that_cannot_come_says_so_instead_of_reading_for_ever(
    page,
    live_server,
    world,
    exports,  # noqa: F811
):
    sign_in(page, live_server.url)
    # The fragment's answer replaced by a gateway's timeout, as a proxy in front would give it.
    page.route("**/health/servers/oss01/clients/", lambda route: route.fulfill(status=504))
    page.goto(f"{live_server.url}/health/servers/oss01/")
    said = page.locator("#busiest-clients .help")
    said.filter(has_text="could not be read").wait_for(timeout=30_000)
    assert said.inner_text() == "The busiest clients could not be read (HTTP 504)."
