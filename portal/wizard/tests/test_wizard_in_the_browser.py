"""An administrator adds the first SSU (with the MDS pair) and then a second one through the
wizard in Chromium, watches each job finish, and sees every target mounted on its primary.
The jobs run in a real Celery worker with the real playbooks against the virtual rack."""

from __future__ import annotations

import copy
import json
import re

import pytest

from portal.surveys.tests.outcomes import ACCEPTED, ACCEPTED_SSU02
from portal.wizard.tests.conftest import load_spec, simulator

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.rack(seconds=370),
]

JOB_MINUTES = 15


def _second_ssu_spec() -> dict:
    spec = copy.deepcopy(load_spec("reference_ssu"))
    spec["ssu"] = "ssu02"
    for number, server in enumerate(spec["servers"], start=3):
        server.update(
            hostname=f"oss{number:02d}",
            nids=[f"10.10.0.{10 + number}@o2ib"],
            bmc=f"10.20.0.{10 + number}",
            pdu_outlet=f"pdu{number - 2}:{number + 2}",
        )
    for array, suffix in zip(spec["arrays"], "ab", strict=True):
        array["name"] = f"ssu02-{suffix}"
    return spec


def _fill_server(page, prefix: str, server: dict) -> None:
    page.fill(f"#id_{prefix}-hostname", server["hostname"])
    page.fill(f"#id_{prefix}-nids", ", ".join(server["nids"]))
    page.fill(f"#id_{prefix}-bmc", server["bmc"])
    page.fill(f"#id_{prefix}-bmc_user", "root")
    page.fill(f"#id_{prefix}-bmc_password", f"bmc-{server['hostname']}")
    page.fill(f"#id_{prefix}-pdu_outlet", server["pdu_outlet"])


def _watch_job(page, shots, name: str) -> None:
    page.screenshot(path=str(shots / f"wizard-{name}-job-running.png"), full_page=True)
    state = page.locator("#job-state")
    page.wait_for_function(
        "() => ['Succeeded', 'Failed', 'Errored']"
        ".includes(document.querySelector('#job-state').innerText)",
        timeout=JOB_MINUTES * 60_000,
        polling=2000,
    )
    page.screenshot(path=str(shots / f"wizard-{name}-job-finished.png"), full_page=True)
    assert state.inner_text() == "Succeeded", page.locator("#job-error").inner_text()
    assert page.locator("#job-progressbar").get_attribute("value") == "100"


def _targets_on_ssu_page(page, url: str) -> dict[str, tuple[str, str, str]]:
    page.goto(url)
    rows = page.locator("table").last.locator("tbody tr")
    found = {}
    for index in range(rows.count()):
        cells = rows.nth(index).locator("td").all_inner_texts()
        found[cells[0]] = (cells[3], cells[5], cells[6])  # primary, now on, state
    return found


def test_add_the_first_and_a_second_ssu_through_the_wizard(
    live_server, world, page, screenshot_dir, celery_worker, worker_rack, tmp_path
):
    mds, ssu1, ssu2 = load_spec("mds_pair"), load_spec("reference_ssu"), _second_ssu_spec()
    for spec in (mds, ssu1, ssu2):  # the hardware is racked and cabled, drives blank
        path = tmp_path / f"{spec['ssu']}.json"
        path.write_text(json.dumps(spec))
        simulator("add", "--rack", str(worker_rack), str(path))

    page.goto(f"{live_server.url}/accounts/login/?next=/ssus/add/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", "pw-operator-123!")
    page.click("button[type=submit]")

    # First SSU, with the filesystem's MDS pair.
    page.wait_for_url("**/ssus/add/filesystem/")
    page.check("input[value=new]")
    page.fill("#id_new_name", "scratch")
    page.click("text=Next: servers")
    page.fill("#id_mds-name", "mds01")
    page.fill("#id_oss-name", "ssu01")
    for position in range(2):
        _fill_server(page, f"mds{position}", mds["servers"][position])
        _fill_server(page, f"oss{position}", ssu1["servers"][position])
    page.click("text=Next: arrays")
    page.wait_for_url("**/ssus/add/arrays/")
    page.click("text=Next: review")
    page.wait_for_url("**/ssus/add/review/")
    assert "scratch-OST0017" in page.content()
    page.screenshot(path=str(screenshot_dir / "wizard-ssu01-review.png"), full_page=True)
    page.reload()  # a reload loses nothing
    page.click("#confirm")
    page.wait_for_url(re.compile(r".*/jobs/\d+/$"))
    _watch_job(page, screenshot_dir, "ssu01")
    # The job ends with the acceptance survey's verdict.
    assert ACCEPTED.search(page.locator("#job-outcome").inner_text())

    targets = _targets_on_ssu_page(page, f"{live_server.url}/ssus/ssu01/")
    assert len(targets) == 24
    for label, (primary, now_on, state) in targets.items():
        assert (now_on, state) == (primary, "Mounted"), label
    page.screenshot(path=str(screenshot_dir / "wizard-ssu01-page.png"), full_page=True)

    # A second SSU joins the filesystem; its OST indices continue from the first's.
    page.goto(f"{live_server.url}/ssus/add/")
    page.check("input[value=existing]")
    page.select_option("#id_existing", "scratch")
    page.click("text=Next: servers")
    page.fill("#id_oss-name", "ssu02")
    for position in range(2):
        _fill_server(page, f"oss{position}", ssu2["servers"][position])
    page.click("text=Next: arrays")
    assert page.input_value("#id_first_ost_index") == "24"
    page.click("text=Next: review")
    page.wait_for_url("**/ssus/add/review/")
    if page.locator("#survey-anyway").count():  # the sensors of ssu01 report its clients
        page.check("#survey-anyway")
    page.click("#confirm")
    page.wait_for_url(re.compile(r".*/jobs/\d+/$"))
    _watch_job(page, screenshot_dir, "ssu02")
    assert ACCEPTED_SSU02.search(page.locator("#job-outcome").inner_text())

    targets = _targets_on_ssu_page(page, f"{live_server.url}/ssus/ssu02/")
    assert sorted(targets) == [f"scratch-OST{index:04x}" for index in range(24, 48)]
    for label, (primary, now_on, state) in targets.items():
        assert (now_on, state) == (primary, "Mounted"), label
    page.screenshot(path=str(screenshot_dir / "wizard-ssu02-page.png"), full_page=True)

    _survey_from_the_ssu_page(page, live_server.url, screenshot_dir)


def _survey_from_the_ssu_page(page, url: str, shots) -> None:
    """An operator surveys ssu01 again from its page, watches the progress, reads the verdict
    and the curves, and opens the SSU's survey history (the acceptance survey is there)."""
    page.goto(f"{url}/ssus/ssu01/")
    page.click("#survey-ssu")
    page.wait_for_url("**/surveys/ssu/ssu01/new/")
    page.fill("#id_size_mb", "4096")
    page.select_option("#id_thr_lo", "2")
    if page.locator("#survey-warnings").count():  # clients connected: confirm
        page.check("#id_confirm")
    page.screenshot(path=str(shots / "survey-1-form.png"), full_page=True)
    page.click("#start-survey")
    page.wait_for_url(re.compile(r".*/surveys/\d+/$"))
    if page.locator("#survey-live").count():
        page.locator("#survey-progress").wait_for()
        page.screenshot(path=str(shots / "survey-2-running.png"), full_page=True)
    page.locator("#survey-verdict").wait_for(timeout=JOB_MINUTES * 60_000)
    verdict = page.locator("#survey-verdict")
    assert verdict.get_attribute("data-verdict") == "pass", verdict.inner_text()
    page.locator("#curve-all canvas").wait_for()
    page.locator("#curve-oss01 canvas").wait_for()
    assert page.locator("#alone-table tbody tr").count() == 24
    page.screenshot(path=str(shots / "survey-3-verdict.png"), full_page=True)
    page.get_by_role("link", name="ssu01", exact=True).first.click()
    page.wait_for_url("**/surveys/ssu/ssu01/")
    rows = page.locator("#survey-table tbody tr")
    assert rows.count() == 2  # the acceptance survey and this one
    assert "(acceptance)" in rows.nth(1).inner_text()
    page.locator("#history-chart canvas").wait_for()
    page.screenshot(path=str(shots / "survey-4-history.png"), full_page=True)
