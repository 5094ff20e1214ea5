"""A grouped incident in Chromium: oss02 goes down and its OSTs run on oss01. The default rules
fire for the server and for each OST; the Alerts page shows one incident (the server first, the
OSTs muted by it), an operator opens it and acknowledges it as one, and the one mail it sent is
read where the demo's mail server keeps it; once oss02 is back, one more mail says it is over.
The alert rounds run in-process over the SSU's real inventory rows, coloured by hand as the
health engine would; no virtual rack."""

from __future__ import annotations

import pytest
from aiosmtpd.controller import Controller

from portal.alerts import defaults
from portal.alerts.choices import GroupStatus
from portal.alerts.mailcatcher import MaildirHandler
from portal.alerts.models import Event, IncidentGroup, Rule
from portal.alerts.tests.test_alert_console_browser import sign_in
from portal.alerts.tests.test_alert_evaluation import health, round_at
from portal.health.models import HealthStatus
from portal.inventory.models import SSU, Target
from portal.inventory.services import save_plans
from portal.inventory.tests.conftest import load_spec
from portal.tests.smtp import free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

MUTED = "muted: oss02 is down"


@pytest.fixture
def mail_catcher(settings, tmp_path):
    """The demo's mail server (``portal.alerts.mailcatcher``): a real SMTP server keeping what
    it receives in a Maildir, which Settings → Mail shows."""
    maildir = tmp_path / "caught"
    controller = Controller(MaildirHandler(maildir), hostname="127.0.0.1", port=free_port())
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS, settings.EMAIL_TIMEOUT = False, 5
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.OSTARA_CAUGHT_MAIL_DIR = str(maildir)
    controller.start()
    yield maildir
    controller.stop()


@pytest.fixture
def oss02_down(world, settings) -> list[Target]:
    """ssu01 built (its inventory rows), the default rules mailing root@localhost, and the
    colours of oss02 down: red, its OSTs orange on oss01. Returns those OSTs."""
    settings.OSTARA_ALERT_GROUP_WAIT = 30  # the defaults, whatever the environment says
    settings.OSTARA_ALERT_GROUP_INTERVAL = 300
    Rule.objects.all().delete()
    defaults.install(Rule, "root@localhost")
    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
    ssu = SSU.objects.get(name="ssu01")
    filesystem, ssu_key, pair = (
        f"filesystem:{ssu.filesystem_id}",
        f"ssu:{ssu.pk}",
        f"pair:{ssu.pair_id}",
    )
    health(filesystem, "filesystem", ssu.filesystem.name)
    health(ssu_key, "ssu", "ssu01", parent=filesystem)
    health(pair, "pair", ssu.pair.name, parent=ssu_key)
    for server in ssu.pair.servers.all():
        if server.hostname == "oss02":
            reason = "powered off: its BMC says so; its targets run on oss01"
            health(f"server:{server.pk}", "server", "oss02", "red", parent=pair,
                   down=True, failed_over=True, reasons=[reason])  # fmt: skip
        else:
            health(f"server:{server.pk}", "server", server.hostname, parent=pair)
    moved = list(Target.objects.filter(primary_server__hostname="oss02").order_by("label"))
    for target in Target.objects.filter(primary_server__pair=ssu.pair):
        if target in moved:
            health(f"target:{target.pk}", "target", target.label, "orange", parent=ssu_key,
                   on_partner=True, reasons=["runs on oss01, its failover server"])  # fmt: skip
        else:
            health(f"target:{target.pk}", "target", target.label, parent=ssu_key)
    return moved


def test_a_server_down_is_one_incident_acknowledged_as_one_and_one_mail(
    live_server, oss02_down, mail_catcher, page, screenshot_dir
):
    moved = oss02_down
    for seconds in range(0, 130, 10):  # what beat runs after each health evaluation
        round_at(seconds)
    group = IncidentGroup.objects.get()
    assert group.status == GroupStatus.FIRING and group.label == "ssu01"
    alerts = len(moved) + 1

    url = live_server.url
    sign_in(page, url, "operator")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Alerts").click()
    page.wait_for_url(f"{url}/alerts/")
    incident = page.locator(f"#incident-{group.pk}")
    line = incident.locator("summary")
    assert "ssu01" in line.inner_text() and f"{alerts} alerts" in line.inner_text()
    assert "oss02: powered off: its BMC says so" in line.inner_text()  # its first cause
    members = incident.locator("table.members")
    assert not members.is_visible()  # one line per incident until it is opened
    page.screenshot(path=str(screenshot_dir / "incident-1-alerts-page.png"), full_page=True)

    line.click()
    members.wait_for()
    rows = members.locator("tbody tr")
    assert rows.count() == alerts
    assert rows.first.locator("td").first.inner_text() == "oss02"  # the cause first
    assert rows.first.get_by_role("link", name="oss02").get_attribute("href") == (
        "/health/servers/oss02/"
    )
    for index, target in enumerate(moved, start=1):  # then its OSTs, muted by it
        cells = rows.nth(index).locator("td")
        assert cells.nth(0).inner_text() == target.label
        assert cells.nth(1).inner_text().startswith("Target on its failover server")
        assert cells.nth(4).inner_text() == MUTED
    page.screenshot(path=str(screenshot_dir / "incident-2-opened.png"), full_page=True)

    incident.get_by_label("Comment on ssu01").fill("oss02 PSU replaced at 14:00")
    incident.get_by_role("button", name="Acknowledge the incident").click()
    page.get_by_text(f"ssu01: acknowledged with its {alerts} firing alerts").wait_for()
    line = page.locator(f"#incident-{group.pk} summary")
    assert "acknowledged by operator" in line.inner_text()
    assert "oss02 PSU replaced at 14:00" in line.inner_text()
    line.click()
    acknowledged = page.locator(f"#incident-{group.pk} table.members tbody tr td:last-child")
    assert all(cell.startswith("operator ") for cell in acknowledged.all_inner_texts())
    assert page.get_by_role("button", name="Acknowledge the incident").count() == 0
    page.screenshot(path=str(screenshot_dir / "incident-3-acknowledged.png"), full_page=True)
    assert Event.objects.filter(acknowledged_by__username="operator").count() == alerts

    # The incident's page: its one mail, to whom, sent; each alert links to its event.
    page.locator(f"#incident-{group.pk}").get_by_role(
        "link", name="The incident and its mail"
    ).click()
    page.wait_for_url(f"{url}/alerts/incidents/{group.pk}/")
    mails = page.locator("table.mails tbody tr")
    assert mails.count() == 1
    assert "Firing" in mails.first.inner_text()
    assert "root@localhost: Sent" in mails.first.inner_text()
    events = page.locator("table.members tbody tr td:nth-child(2) a")
    assert events.count() == alerts
    page.screenshot(path=str(screenshot_dir / "incident-4-page.png"), full_page=True)

    # The mail, where the demo's mail server keeps it (Settings → Mail).
    page.goto(f"{url}/alerts/settings/mail/")
    subject = f"[Ostara CRITICAL] ssu01: {alerts} alerts – oss02"
    page.get_by_role("link", name=subject, exact=False).click()
    page.get_by_role("heading", level=1).wait_for()
    assert page.get_by_role("heading", level=1).inner_text().startswith(subject)
    preview = page.frame_locator("iframe.mail-preview")
    preview.get_by_text(moved[0].label).wait_for()
    page.screenshot(path=str(screenshot_dir / "incident-5-mail-in-the-portal.png"), full_page=True)
    # The mail's HTML part on its own.
    page.goto(url + page.locator("iframe.mail-preview").get_attribute("src"))
    body = page.locator("body").inner_text()
    assert body.count(MUTED) == len(moved)
    assert "oss02" in body and all(target.label in body for target in moved)
    assert (
        page.get_by_role("link", name="The incident")
        .get_attribute("href")
        .endswith(f"/alerts/incidents/{group.pk}/")
    )
    page.screenshot(path=str(screenshot_dir / "incident-6-mail.png"), full_page=True)

    # oss02 is back and its OSTs with it: one mail says the incident is over, how long each
    # alert lasted.
    for row in HealthStatus.objects.filter(kind__in=["server", "target"]):
        health(row.key, row.kind, row.name, parent=row.parent_key)
    for seconds in range(130, 260, 10):
        round_at(seconds)
    page.goto(f"{url}/alerts/settings/mail/")
    subjects = page.locator("table a").all_inner_texts()
    assert len(subjects) == 2 and subjects[0].startswith(
        f"[Ostara CRITICAL] ssu01: {alerts} alerts resolved"
    )
    page.get_by_role("link", name=subjects[0]).click()
    page.get_by_role("heading", level=1).wait_for()
    page.goto(url + page.locator("iframe.mail-preview").get_attribute("src"))
    assert "Lasted" in page.locator("table").inner_text()
    page.screenshot(path=str(screenshot_dir / "incident-7-resolved-mail.png"), full_page=True)
