"""Every chart page in Chromium, as a person reads it before pointing at anything: each legend is
a key of its series (no "Value: share: –" from uPlot's live legend with no point hovered), and
pointing at a point shows its label and values; sizes in the notes and values in binary units by
their names, counts with separators. A screenshot of each page is kept with the test results."""

from __future__ import annotations

import re
import time

import pytest

from portal.health.tests.conftest import (  # noqa: F401 (fixtures)
    evaluated_rack,
    metrics_db,
    rack_inventory,
)
from portal.surveys.tests.test_survey_pages_and_api import stored_survey
from portal.tests.test_content_security_policy_browser import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

# Each chart page, a name for its screenshot, and the series its legends name.
PAGES = [
    ("/", "dashboard", {"read", "write", "fill", "share"}),
    ("/health/ssus/ssu01/", "ssu", {"read", "write", "fill", "share"}),
    (
        "/health/servers/oss01/",
        "server",
        {"user", "system", "iowait", "used", "CPU1 Temp", "send", "receive", "read", "write"},
    ),
    ("/health/targets/scratch-OST0002/", "target", {"read", "write", "fill"}),
    ("/analytics/load/", "analytics-load", {"share"}),
    ("/analytics/fill/", "analytics-fill", {"fill"}),
    ("/analytics/access/", "analytics-access", {"read", "write"}),
]

# Per chart, the legend's entries as they show: "name", or "name: value" when a value shows
# (uPlot draws the colon after the name only while the legend is live).
LEGENDS = """Array.from(document.querySelectorAll(".chart .u-legend")).map((legend) =>
  Array.from(legend.querySelectorAll(".u-series")).filter((row) => row.offsetParent !== null)
    .map((row) => {
      const name = row.querySelector("th").innerText.trim();
      const value = row.querySelector("td");
      const shown = value && getComputedStyle(value).display !== "none";
      return shown ? `${name}: ${value.innerText.trim()}` : name;
    }))"""


@pytest.fixture
def signed_in(page, live_server, world, evaluated_rack):  # noqa: F811
    evaluated_rack.write(time.time())  # a third round: two steps of rates for the time charts
    sign_in(page, live_server.url)
    return page


def test_chart_legends_read_well_with_and_without_a_point_hovered(
    signed_in, live_server, screenshot_dir
):
    page = signed_in
    survey = stored_survey(4700)  # its load curves and the SSU's survey history
    surveys = [
        (f"/surveys/{survey.pk}/", "survey", {"write", "read", "expected"}),
        ("/surveys/ssu/ssu01/", "survey-history", {"write", "read"}),
    ]
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    for path, name, series in PAGES + surveys:
        page.goto(f"{live_server.url}{path}")
        charts = page.locator(".chart")
        page.wait_for_function(
            "n => document.querySelectorAll('.chart .uplot').length === n",
            arg=charts.count(),
            timeout=20_000,
        )
        page.mouse.move(0, 0)
        legends = page.evaluate(LEGENDS)
        assert legends, f"{path}: no chart legend"
        for legend in legends:
            # A key: the series' names, no x series, no empty values, no colons.
            text = " ".join(legend)
            assert "Value" not in text and "–" not in text and ":" not in text, (path, legend)
            assert set(legend) <= series | {"expected"}, (path, legend)
        notes = " ".join(page.locator(".chart-card .note").all_inner_texts())
        # Sizes in binary units (a survey's MB/s is obdfilter-survey's own figure).
        assert not re.search(r"\d (KB|MB|GB|TB)\b(?!/s)", notes), (path, notes)
        page.screenshot(path=str(screenshot_dir / f"charts-{name}.png"), full_page=True)
        # Pointing at the first chart's middle: its legend names the point and its values.
        first = page.locator(".chart .u-over").first
        first.hover()
        hovered = " · ".join(page.evaluate(LEGENDS)[0])
        assert ":" in hovered, (path, hovered)
        if name == "analytics-load":
            assert "OSS:" in hovered and "%" in hovered, hovered
        if name == "dashboard":
            assert "MiB/s" in hovered, hovered
            page.screenshot(path=str(screenshot_dir / "charts-dashboard-hovered.png"))
    assert not errors, errors
    # The dashboard's notes under the balance charts: binary units by their names.
    page.goto(f"{live_server.url}/")
    page.wait_for_selector(".chart-card .note")
    notes = " ".join(page.locator(".chart-card .note").all_inner_texts())
    assert re.search(r"total [\d.,]+ [GTP]iB used of [\d.,]+ [GTP]iB", notes), notes
    assert re.search(r"[\d.,]+ (MiB|GiB|TiB) moved in the range", notes), notes
