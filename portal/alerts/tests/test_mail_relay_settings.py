"""Settings → Mail: an administrator points the appliance at the site's mail relay, with a login;
the password is stored encrypted with the credentials key (kept outside the database) and never
shown back; alert and test mail then go through that relay, signing in (a real SMTP server on
loopback that requires AUTH). Until the form is saved the EMAIL_* environment applies."""

from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from portal.alerts.choices import ConditionKind, DeliveryStatus, Severity, TransitionKind
from portal.alerts.models import Delivery, Event, MailRelaySettings, Rule, Transition
from portal.alerts.services.outbox import deliver_due
from portal.tests.smtp import SmtpServer, free_port

pytestmark = [
    pytest.mark.django_db,
    # The relay on loopback asks for AUTH without TLS, which aiosmtpd warns about.
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning"),
]

PASSWORD = "Relay-s3cret-#42"


@pytest.fixture
def relay(settings):
    """The site's relay, requiring a login; the environment points elsewhere (nothing there)."""
    server = SmtpServer(free_port(), credentials=("ostara-alerts", PASSWORD))
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    settings.EMAIL_TIMEOUT = 5
    server.start()
    yield server
    server.stop()


def relay_form(relay: SmtpServer, **changes) -> dict:
    form = {
        "host": "127.0.0.1",
        "port": relay.port,
        "username": "ostara-alerts",
        "password": PASSWORD,
        "from_address": "ostara@storage.example.org",
    }
    return {**form, **changes}


def send_test_mail(client):
    return client.post(reverse("alerts:mail"), {"address": "storage-team@example.org"})


def test_mail_goes_through_the_saved_relay_signed_in(client, world, relay):
    client.force_login(world["admin"])
    # Before: the environment's mail server, where nothing answers.
    assert "could not be reached" in send_test_mail(client).content.decode()

    response = client.post(reverse("alerts:mail-relay"), relay_form(relay))
    assert response.status_code == 302
    assert send_test_mail(client).status_code == 302
    (message,) = relay.mailbox.messages
    assert message["From"] == "ostara@storage.example.org"
    assert message["Subject"] == "[Ostara] Test mail"
    assert relay.logins == [("ostara-alerts", True)]


def test_the_database_and_the_page_never_hold_the_plain_password(client, world, relay):
    client.force_login(world["admin"])
    client.post(reverse("alerts:mail-relay"), relay_form(relay))
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM alerts_mailrelaysettings")
        rows = cursor.fetchall()
    assert len(rows) == 1
    assert PASSWORD not in repr(rows)
    assert MailRelaySettings.load().password == PASSWORD
    page = client.get(reverse("alerts:mail")).content.decode()
    assert PASSWORD not in page
    assert "a password is stored: leave empty to keep it" in page


def test_an_empty_password_keeps_the_stored_one_forget_clears_it(client, world, relay):
    client.force_login(world["admin"])
    client.post(reverse("alerts:mail-relay"), relay_form(relay))
    client.post(reverse("alerts:mail-relay"), relay_form(relay, password=""))
    assert send_test_mail(client).status_code == 302
    assert relay.logins == [("ostara-alerts", True)]

    client.post(reverse("alerts:mail-relay"), relay_form(relay, password="", forget_password="on"))
    assert MailRelaySettings.load().password_encrypted == ""
    # The relay wants a login: without one it refuses the mail, and the page says so.
    assert "530" in send_test_mail(client).content.decode()


def test_a_wrong_password_is_reported_at_the_test_mail(client, world, relay):
    client.force_login(world["admin"])
    client.post(reverse("alerts:mail-relay"), relay_form(relay, password="not-it"))
    page = send_test_mail(client).content.decode()
    assert "the mail relay refused its settings (Settings → Mail): 535" in page
    assert relay.mailbox.messages == []


def test_alert_mail_waits_through_a_wrong_relay_password_and_goes_out_once_it_is_mended(
    client, world, relay
):
    """A wrong login is the relay's settings, not the mail's: every alert mail would otherwise
    be failed for good until an administrator noticed."""
    client.force_login(world["admin"])
    client.post(reverse("alerts:mail-relay"), relay_form(relay, password="not-it"))
    rule = Rule.objects.create(
        name="Server red (mail test)", severity=Severity.CRITICAL, condition=ConditionKind.HEALTH
    )
    event = Event.objects.create(
        rule=rule, severity=rule.severity, fingerprint="server:oss02", object_label="oss02"
    )
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    delivery = Delivery.objects.create(transition=transition, address="storage@example.org")

    deliver_due()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING
    assert "refused its settings (Settings → Mail): 535" in delivery.last_error

    client.post(reverse("alerts:mail-relay"), relay_form(relay))
    deliver_due(delivery.next_attempt)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.SENT
    assert len(relay.mailbox.messages) == 1


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("port", 70000, "a port is 1 to 65535"),
        ("host", "relay.example.org; rm -rf /", "is not a valid host name"),
        ("from_address", "not-an-address", "Enter a valid email address"),
        ("username", "ostara\r\nMAIL FROM:<x>", "may not hold control characters"),
        # A valid address (a quoted local part may hold controls), but not in a From header.
        ("from_address", '"ostara\x01"@example.org', "may not hold control characters"),
    ],
)
def test_bad_input_is_refused_at_its_field_and_nothing_is_saved(
    client, world, relay, field, value, reason
):
    client.force_login(world["admin"])
    response = client.post(reverse("alerts:mail-relay"), relay_form(relay, **{field: value}))
    assert response.status_code == 200
    page = response.content.decode()
    assert f'id="id_{field}-error"' in page
    assert reason in page.split(f'id="id_{field}-error"')[1].split("</div>")[0]
    assert MailRelaySettings.load().saved is None


def test_a_viewer_reads_the_relay_but_changes_nothing(client, world, relay):
    client.force_login(world["viewer"])
    page = client.get(reverse("alerts:mail")).content.decode()
    assert 'name="host"' in page and "disabled" in page
    response = client.post(reverse("alerts:mail-relay"), relay_form(relay))
    assert response.status_code == 403
    assert MailRelaySettings.load().saved is None


def test_healthz_asks_the_saved_relay(client, world, relay):
    client.force_login(world["admin"])
    assert client.get("/healthz").json()["services"]["mail"]["ok"] is False  # the environment's
    client.post(reverse("alerts:mail-relay"), relay_form(relay))
    mail = client.get("/healthz").json()["services"]["mail"]
    assert mail["ok"] is True
    assert f"127.0.0.1:{relay.port}" in mail["detail"]
