"""The kernel lines in Chromium as an administrator uses them: a target's page shows what the
kernel said about it, its link opens the search on that target, and the search narrowed to one
message number by its form shows only those lines. Screenshots of both pages are kept with the
test results."""

from __future__ import annotations

import pytest

from portal.health.tests.test_kernel_log_pages import RECOVERY, write_kernel_logs
from portal.tests.test_content_security_policy_browser import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_from_a_targets_kernel_lines_to_the_search(
    page,
    live_server,
    world,
    rack_inventory,
    metrics_db,
    tmp_path,
    screenshot_dir,  # noqa: F811
):
    write_kernel_logs(tmp_path, RECOVERY)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/health/targets/scratch-OST0003/")
    lines = page.locator("#kernel-lines tbody tr")
    assert lines.count() == 3
    assert "ost_statfs to node 169.254.7.12@tcp failed" in lines.nth(0).inner_text()
    page.locator("#kernel-lines").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "kernel-lines-target.png"), full_page=True)

    page.click("#kernel-lines >> text=Search the kernel log")
    page.wait_for_url("**/health/kernel-log/?target=scratch-OST0003")
    assert page.locator("#id_target").input_value() == "scratch-OST0003"
    assert page.locator("table.kernel-lines tbody tr").count() == 3
    page.fill("#id_message_number", "11-0")
    page.click("#kernel-log-filter button[type=submit]")
    page.wait_for_url("**message_number=11-0**")
    rows = page.locator("table.kernel-lines tbody tr")
    assert rows.count() == 1 and "rc = -107" in rows.nth(0).inner_text()
    page.screenshot(path=str(screenshot_dir / "kernel-log-search.png"), full_page=True)

    page.fill("#id_message_number", "eleven")
    page.click("#kernel-log-filter button[type=submit]")
    assert "is not a Lustre message number" in page.locator("#kernel-log-filter").inner_text()
    assert errors == []
