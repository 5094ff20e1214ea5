"""Alert mail from a clustered virtual rack whose servers run the product's sensor agent, with
the default rules and a real SMTP server on loopback, evaluated as the periodic tasks do (a
health evaluation, then the alert round and the outbox):

- a failed drive: exactly one "firing" mail for its SSU naming the OST, the drive and the
  volume group (its "volume group" and "redundancy lost" alerts together), one reminder once
  the repeat interval has passed, none after the acknowledgement, one "resolved" mail when the
  drive is replaced;
- a crashed OSS: one mail for its SSU, the server's alert with its targets' alerts muted in it,
  quoting what the partner's kernel said as it took the targets over (their recovery), which
  the page of such a target shows too (a degraded group, one drive lost, logs nothing on the
  server: the array hides it);
- a lost volume group (three drives of one): its OST's page shows the server's `unable to
  precreate: rc = -30`, and the mail quotes it among the recovery lines of the targets moved.

The group wait is 0 here (the rack's seconds are precious); the grouping's timing is tested in
``test_alert_grouping`` and ``test_alert_incidents``.
"""

from __future__ import annotations

import re
import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings

from portal.alerts.models import Event, IncidentGroup, Rule
from portal.alerts.services.incidents import acknowledge_group
from portal.alerts.services.outbox import deliver_due
from portal.health import tasks as health_tasks
from portal.health.tests.conftest import SENSOR_INTERVAL, virtual_rack_thresholds
from portal.health.tests.test_health_on_virtual_rack import drive_location, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.rack(seconds=250)]

REPEAT = 40  # seconds between reminders of the volume group rule in this test
OSS01_OSTS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]


def evaluation_round() -> None:
    """What beat runs every interval: colours, then the alert round on the colours health hands
    over (its ``evaluated`` signal), and the outbox."""
    health_tasks.evaluate()
    deliver_due()


def kinds(smtp) -> list[str]:
    """Each mail's kind, as its first line says it: "Firing: ssu01, 1 alert (warning)"."""
    return [text(message).split(":")[0] for message in smtp.mailbox.messages]


def run_until(smtp, count: int, seconds: float) -> None:
    """Evaluate every half interval until ``count`` mails have arrived, or time is up."""
    deadline = time.monotonic() + seconds
    while len(smtp.mailbox.messages) < count and time.monotonic() < deadline:
        evaluation_round()
        time.sleep(SENSOR_INTERVAL / 2)


def text(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


@override_settings(OSTARA_ALERT_GROUP_WAIT=0)
def test_alert_mail_from_a_virtual_rack(virtual_rack, metrics_db, client, world, smtp, tmp_path):
    virtual_rack.save_inventory()
    # Silent after six rounds, not three: the crash's failover holds the rack for seconds on a
    # busy 2-core machine, and an array collector late by three rounds (15 s) was told as a
    # second incident of the crash. The count of mails is what this test is about.
    virtual_rack_thresholds(silent_rounds=6)
    Rule.objects.update(extra_addresses="ops@example.org")
    Rule.objects.filter(builtin="volume-group").update(repeat_seconds=REPEAT, clear_seconds=0)
    # Without its minute, so the rack's test need not wait for it (the first mail of an incident
    # waits for alerts of its place about to fire: test_alert_incidents).
    Rule.objects.filter(builtin="redundancy-lost").update(for_seconds=0, clear_seconds=0)
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
    # One mail, however many rules the fault trips (the volume group's, its lost redundancy).
    (firing,) = smtp.mailbox.messages
    assert smtp.mailbox.subjects()[0].startswith("[Ostara WARNING] ssu01: ")
    assert "scratch-OST0002" in text(firing)
    assert location in text(firing) and group in text(firing)

    # Still failed after the repeat interval: one reminder.
    run_until(smtp, 2, REPEAT + 3 * SENSOR_INTERVAL)
    assert kinds(smtp) == ["Firing", "Reminder"]

    # Acknowledged: no more reminders over two more intervals.
    incident = IncidentGroup.objects.get(status="firing")
    acknowledge_group(incident, get_user_model().objects.get(username="operator"), "spare due")
    run_until(smtp, 3, 2 * REPEAT)
    assert kinds(smtp) == ["Firing", "Reminder"], [text(m) for m in smtp.mailbox.messages]

    # The drive replaced: one "resolved" mail.
    virtual_rack.clear_all()
    wait_for(client, {("filesystem", "scratch"): "green"}, 12 * SENSOR_INTERVAL)
    run_until(smtp, 3, 4 * SENSOR_INTERVAL)
    assert kinds(smtp) == ["Firing", "Reminder", "Resolved"]
    assert "scratch-OST0002" in text(smtp.mailbox.messages[-1])

    # A crashed OSS: one mail for its SSU, the server first, the targets it carried muted.
    before = len(smtp.mailbox.messages)
    virtual_rack.inject("server-crash", server="oss01")
    moved = {("target", label): ("orange", "failover server oss02") for label in OSS01_OSTS}
    wait_for(client, {("server", "oss01"): "red", **moved}, 12 * SENSOR_INTERVAL)
    # Past the target rule's minute and the sensor's silence: what else would have mailed.
    run_until(smtp, before + 2, 80)
    crash = smtp.mailbox.messages[before:]
    (subject,) = smtp.mailbox.subjects()[before:]
    assert subject.startswith("[Ostara CRITICAL] ssu01: ") and "oss01" in subject
    assert "powered off" in text(crash[0])
    # What the survivors' kernels said about oss01's OSTs, read by their sensors: oss02
    # starting them (their recovery) on the page of such a target; in the mail its newest
    # lines, each naming one of them (oss02's recovery, the MDT's lost and restored
    # connections: which are newest depends on the rounds).
    recovery = "Lustre: scratch-OST0000: Will be in recovery for at least 2:30"
    assert recovery in client.get("/health/targets/scratch-OST0000/").content.decode()
    assert "What the kernel said" in text(crash[0]), text(crash[0])
    said = text(crash[0]).split("What the kernel said")[1].splitlines()[1:]
    quoted = [line for line in said if re.match(r"\d{4}-\d\d-\d\d ", line)]
    assert quoted, text(crash[0])
    for line in quoted:
        server, named = re.search(r"  (\w+)  \w+  Lustre.*?(scratch-OST[0-9a-f]{4})", line).groups()
        assert server in ("oss02", "mds01") and named in OSS01_OSTS, line
    # The targets' own alerts are recorded, muted in the server's incident: each moved target's
    # "on its failover server"; any other alert one of them fires meanwhile (a full run once saw
    # two go red a minute later, cause not known) is in the same incident, not a mail of its own.
    targets = Event.objects.filter(object_label__in=OSS01_OSTS, status="firing")
    moved_alerts = targets.filter(rule__name="Target on its failover server")
    assert sorted(moved_alerts.values_list("object_label", flat=True)) == sorted(OSS01_OSTS)
    assert {event.group.label for event in targets} == {"ssu01"}


@override_settings(OSTARA_ALERT_GROUP_WAIT=0)
def test_a_lost_volume_group_mails_what_its_server_kernel_said(
    virtual_rack, metrics_db, client, world, smtp, tmp_path
):
    """Three drives of ssu01-a-vg04 failed: OST0004's group is lost, its server's ldiskfs goes
    read-only and Lustre logs `unable to precreate: rc = -30` for it. The target's page shows
    the line, and the mail about the SSU quotes it, however many recovery lines the targets
    its server then gives up to the partner add."""
    virtual_rack.save_inventory()
    virtual_rack_thresholds(silent_rounds=6)
    Rule.objects.update(extra_addresses="ops@example.org")
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")
    wait_for(client, {("filesystem", "scratch"): "green"}, 60)

    virtual_rack.inject("drive-failed", array="ssu01-a", volume_group="ssu01-a-vg04", count=3)
    wait_for(
        client,
        {("target", "scratch-OST0004"): ("red", "volume group ssu01-a-vg04 has failed")},
        6 * SENSOR_INTERVAL,
    )
    # Colours only so far: the alert round has not run. It runs once the sensor has sent the
    # line, as an appliance's group wait (30 s) leaves it time to on a real server.
    said = "scratch-OST0004: unable to precreate: rc = -30"
    deadline = time.monotonic() + 6 * SENSOR_INTERVAL
    page = ""
    while said not in page:
        assert time.monotonic() < deadline, f"OST0004's page lacks {said!r}: {page[-3000:]}"
        time.sleep(1)
        page = client.get("/health/targets/scratch-OST0004/").content.decode()
    # Past the rules' minute: the first mail waits for the alerts of its place about to fire.
    run_until(smtp, 1, 90)
    # The first mail: the filesystem's (its OST lost: data gone) or the SSU's, whichever place
    # fired first; either is about OST0004 and quotes what its server said.
    subject = smtp.mailbox.subjects()[0]
    assert subject.startswith("[Ostara CRITICAL] ") and "OST0004" in text(
        smtp.mailbox.messages[0]
    ), subject
    mail = text(smtp.mailbox.messages[0])
    assert "What the kernel said" in mail, mail
    quoted = mail.split("What the kernel said")[1]
    assert re.search(r"  oss0[12]  err  LustreError: .*" + re.escape(said), quoted), mail
