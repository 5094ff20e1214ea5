"""Settings → Mail: the test mail through the real mail path, and the demo's mail catcher (a
real SMTP server process) whose messages the page lists."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from portal.alerts.services.mail_settings import caught_mail
from portal.tests.smtp import free_port

pytestmark = pytest.mark.django_db


def test_an_admin_sends_a_test_mail_that_arrives(client, world, smtp):
    client.force_login(world["admin"])
    response = client.post(reverse("alerts:mail"), {"address": "storage-team@example.org"})
    assert response.status_code == 302
    (message,) = smtp.mailbox.messages
    assert message["Subject"] == "[Ostara] Test mail"
    assert message["To"] == "storage-team@example.org"
    assert "mail settings work" in message.get_content()


def test_a_bad_address_is_refused_at_the_field(client, world, smtp):
    client.force_login(world["admin"])
    response = client.post(reverse("alerts:mail"), {"address": "not-an-address"})
    assert response.status_code == 200
    assert "Enter a valid email address" in response.content.decode()
    assert smtp.mailbox.messages == []


def test_an_smtp_outage_is_reported_at_the_field(client, world, smtp):
    smtp.stop()
    client.force_login(world["admin"])
    response = client.post(reverse("alerts:mail"), {"address": "ops@example.org"})
    assert "the mail server could not be reached" in response.content.decode()


def test_a_viewer_sees_the_settings_but_sends_nothing(client, world, smtp):
    client.force_login(world["viewer"])
    page = client.get(reverse("alerts:mail")).content.decode()
    assert "Only administrators change the mail relay and send test mail" in page
    response = client.post(reverse("alerts:mail"), {"address": "ops@example.org"})
    assert response.status_code == 403
    assert smtp.mailbox.messages == []


def test_the_command_sends_and_names_a_bad_address(smtp, capsys):
    call_command("alerts_test_mail", "ops@example.org")
    assert "sent a test mail to ops@example.org" in capsys.readouterr().out
    assert len(smtp.mailbox.messages) == 1
    with pytest.raises(CommandError, match="address: 'nope' is not an e-mail address"):
        call_command("alerts_test_mail", "nope")


def test_the_demo_mail_catcher_keeps_mail_that_the_page_lists(client, world, settings, tmp_path):
    port = free_port()
    maildir = tmp_path / "mail"
    catcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "portal.alerts.mailcatcher",
            "--listen",
            f"127.0.0.1:{port}",
            "--maildir",
            str(maildir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "mail catcher on" in catcher.stdout.readline()
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.OSTARA_CAUGHT_MAIL_DIR = str(maildir)
        call_command("alerts_test_mail", "ops@example.org")
        deadline = time.monotonic() + 10
        while not caught_mail(maildir) and time.monotonic() < deadline:
            time.sleep(0.1)
        (message,) = caught_mail(maildir)
        client.force_login(world["viewer"])
        page = client.get(reverse("alerts:mail")).content.decode()
        assert "[Ostara] Test mail" in page and "ops@example.org" in page
        detail = client.get(reverse("alerts:caught-message", args=[message.key]))
        assert "mail settings work" in detail.content.decode()
    finally:
        catcher.terminate()
        catcher.wait(timeout=10)
    assert catcher.returncode == 0
