"""Alert mail from a clustered virtual rack whose servers run the product's sensor agent, with
the default rules and a real SMTP server on loopback, evaluated as the periodic tasks do (a
health evaluation, then the alert round and the outbox):

- a failed drive: exactly one "firing" mail for its OST naming the drive and the volume group,
  one reminder once the repeat interval has passed, none after the acknowledgement, one
  "resolved" mail when the drive is replaced;
- a crashed OSS: one mail for the server; its targets' alerts are recorded, not mailed one by
  one.
"""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from portal.alerts.choices import DeliveryStatus
from portal.alerts.models import Delivery, Event, Rule
from portal.alerts.services.evaluation import acknowledge
from portal.alerts.services.outbox import deliver_due
from portal.health import tasks as health_tasks
from portal.health.tests.conftest import SENSOR_INTERVAL, virtual_rack_thresholds
from portal.health.tests.test_health_on_virtual_rack import drive_location, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db]

REPEAT = 40  # seconds between reminders of the volume group rule in this test
OSS01_OSTS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]


def evaluation_round() -> None:
    """What beat runs every interval: colours, then the alert round on the colours health hands
    over (its ``evaluated`` signal), and the outbox."""
    health_tasks.evaluate()
    deliver_due()


def kinds(smtp) -> list[str]:
    return [s.split("]")[1].split(":")[0].strip() for s in smtp.mailbox.subjects()]


def run_until(smtp, count: int, seconds: float) -> None:
    """Evaluate every half interval until ``count`` mails have arrived, or time is up."""
    deadline = time.monotonic() + seconds
    while len(smtp.mailbox.messages) < count and time.monotonic() < deadline:
        evaluation_round()
        time.sleep(SENSOR_INTERVAL / 2)


def text(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def test_alert_mail_from_a_virtual_rack(virtual_rack, metrics_db, client, world, smtp, tmp_path):
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    Rule.objects.update(extra_addresses="ops@example.org")
    Rule.objects.filter(builtin="volume-group").update(repeat_seconds=REPEAT, clear_seconds=0)
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")
    wait_for(client, {("filesystem", "scratch"): "green"}, 60)
    evaluation_round()
    assert smtp.mailbox.messages == []  # a green rack mails nothing

    # A failed drive: one mail for the OST, within two evaluation intervals of the sensors
    # reporting it.
    virtual_rack.inject("drive-failed", array="ssu01-a", drive="0,2,5")
    location, group = drive_location("ssu01-a", 0, 2, 5)
    wait_for(client, {("target", "scratch-OST0002"): ("orange", group)}, 6 * SENSOR_INTERVAL)
    run_until(smtp, 1, 2 * settings.HEALTH_EVALUATE_SECONDS)
    (firing,) = smtp.mailbox.messages
    assert "Firing: scratch-OST0002" in firing["Subject"]
    assert location in text(firing) and group in text(firing)

    # Still failed after the repeat interval: one reminder.
    run_until(smtp, 2, REPEAT + 3 * SENSOR_INTERVAL)
    assert kinds(smtp) == ["Firing", "Reminder"]

    # Acknowledged: no more reminders over two more intervals.
    event = Event.objects.get(object_label="scratch-OST0002", status="firing")
    acknowledge(event, get_user_model().objects.get(username="operator"), "spare on its way")
    run_until(smtp, 3, 2 * REPEAT)
    assert kinds(smtp) == ["Firing", "Reminder"]

    # The drive replaced: one "resolved" mail.
    virtual_rack.clear_all()
    wait_for(client, {("filesystem", "scratch"): "green"}, 12 * SENSOR_INTERVAL)
    run_until(smtp, 3, 4 * SENSOR_INTERVAL)
    assert kinds(smtp) == ["Firing", "Reminder", "Resolved"]
    assert "Resolved: scratch-OST0002" in smtp.mailbox.messages[-1]["Subject"]

    # A crashed OSS: one mail for the server, naming the targets it carried.
    before = len(smtp.mailbox.messages)
    virtual_rack.inject("server-crash", server="oss01")
    moved = {("target", label): ("orange", "failover server oss02") for label in OSS01_OSTS}
    wait_for(client, {("server", "oss01"): "red", **moved}, 12 * SENSOR_INTERVAL)
    # Past the target rule's minute and the sensor's silence: what else would have mailed.
    run_until(smtp, before + 2, 80)
    crash = smtp.mailbox.messages[before:]
    assert [m["Subject"] for m in crash] == ["[Ostara CRITICAL] Firing: oss01 - Anything red"]
    assert "powered off" in text(crash[0])
    # The targets' own alerts are recorded, told in or held back by the server's mail.
    targets = Event.objects.filter(object_label__in=OSS01_OSTS, status="firing")
    assert targets.count() == len(OSS01_OSTS)
    statuses = set(
        Delivery.objects.filter(transition__event__in=targets).values_list("status", flat=True)
    )
    assert statuses == {DeliveryStatus.FOLDED}
