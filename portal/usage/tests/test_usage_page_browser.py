"""The usage page in Chromium, on the hand-written accounting of ``conftest``: an administrator
opens Usage from the main navigation, sees the top users with their forecast, the chart of
their growth and the owners over their soft limit; uploads a ``getent passwd`` output (a bad
line refused by its number first) and finds the users named; the OST's page names who fills
it. Screenshots are kept for people to look at."""

from __future__ import annotations

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PASSWD = """root:x:0:0:root:/root:/bin/bash
alice:x:1000:1000:Alice:/home/alice:/bin/bash
bob:x:1001:1001:Bob:/home/bob:/bin/bash
"""


def sign_in(page, url: str, who: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", who)
    page.fill("#id_password", f"pw-{who}-123!")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def test_an_administrator_finds_who_fills_the_filesystem(
    live_server, world, accounting, page, screenshot_dir
):
    url = live_server.url
    sign_in(page, url, "admin")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Usage").click()
    page.wait_for_url(f"{url}/usage/")
    users = page.locator("#top-user-kbytes tbody tr")
    assert users.first.get_attribute("data-owner") == "user:1001"  # the most space first
    assert users.nth(1).get_attribute("data-owner") == "user:1000"
    over = page.locator("#over-soft").inner_text()
    assert "user 1003" in over and "past its grace" in over
    assert "user 1002" in over and "in grace until" in over
    page.locator("[data-chart=bars] canvas").first.wait_for()
    page.screenshot(path=str(screenshot_dir / "usage-1-numbers.png"), full_page=True)

    page.get_by_role("link", name="Names of ids").click()
    page.fill("#id_text", PASSWD + "carol:x:1002\n")
    page.get_by_role("button", name="Store the names").click()
    assert "line 4: 3 fields separated by ':'" in page.locator("#id_text-error").inner_text()
    page.fill("#id_text", PASSWD)
    page.get_by_role("button", name="Store the names").click()
    assert "3 user names uploaded." in page.locator(".messages").inner_text()
    page.get_by_role("link", name="Back to the usage").click()
    first = page.locator("#top-user-kbytes tbody tr").first.inner_text()
    assert "user bob (1001)" in first
    page.screenshot(path=str(screenshot_dir / "usage-2-named.png"), full_page=True)

    page.locator("#per-ost").get_by_role("link", name="scratch-OST0000").click()
    owners = page.locator("#target-owners").inner_text()
    assert "user bob (1001) 300 GiB (60 %)" in owners
    assert "user alice (1000) 200 GiB (40 %)" in owners
    page.locator("#target-owners").screenshot(path=str(screenshot_dir / "usage-3-target.png"))
