"""The alert mail about an array or a target carries the array's recent events that name it or
its array (the newest few of the minutes before the mail), sent through a real SMTP server on
loopback; an object no array event names gets none, and InfluxDB's silence never holds a mail."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from portal import influxdb as influx
from portal.alerts.choices import ConditionKind, GroupMailKind, Severity, TransitionKind
from portal.alerts.models import Delivery, Event, GroupMail, IncidentGroup, Rule, Transition
from portal.alerts.services.outbox import deliver_due
from portal.health.tests.array_metrics import failed_drive_events, write_event
from portal.inventory.models import Server, StorageArray, Target

pytestmark = [pytest.mark.services, pytest.mark.django_db]


def alert(key: str, label: str) -> Event:
    rule = Rule.objects.get_or_create(
        name="Array not optimal", severity=Severity.CRITICAL, condition=ConditionKind.HEALTH
    )[0]
    return Event.objects.create(
        rule=rule,
        severity=rule.severity,
        fingerprint=key,
        object_label=label,
        object_key=key,
        summary=f"{label}: volume group ssu01-a-vg03 is degraded",
    )


def mailed(smtp, event: Event) -> str:
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    Delivery.objects.create(transition=transition, address="ops@example.org")
    assert len(deliver_due().sent) == 1
    message = smtp.mailbox.messages[-1]
    return message.get_body(preferencelist=("plain",)).get_content()


@pytest.fixture
def drive_failed(rack_inventory, metrics_db):
    """A drive of ssu01-a-vg03 failed 2 minutes ago, its group degraded; older and other
    arrays' events around them."""
    drive, _address = failed_drive_events(120)
    write_event(
        array="ssu01-a",
        component="controller",
        ident="A",
        sequence=30,
        at=time.time() - 3600,
        description="Controller A failed an hour ago",
        event_type="0x5005",
    )
    return drive


def test_the_mail_about_an_array_lists_its_recent_events(smtp, drive_failed):
    array = StorageArray.objects.get(name="ssu01-a")
    text = mailed(smtp, alert(f"storagearray:{array.pk}", "ssu01-a"))
    assert "Recent array events (the 15 minutes before this mail, newest first):" in text
    lines = text.split("newest first):")[1].strip().splitlines()
    d = drive_failed
    assert (
        "critical  ssu01-a volume group ssu01-a-vg03: Volume group ssu01-a-vg03 degraded"
        in (lines[0])
    )
    assert (
        f"critical  ssu01-a drive tray {d.enclosure.position}, drawer {d.drawer}, slot {d.slot}: "
        f"Drive failed: tray {d.enclosure.position}, drawer {d.drawer}, slot {d.slot} (0x226C)"
        in lines[1]
    )
    assert "an hour ago" not in text and "ssu01-b" not in text


def test_the_mail_about_a_target_lists_its_groups_and_drives_events(smtp, drive_failed):
    target = Target.objects.get(label="scratch-OST0003")
    text = mailed(smtp, alert(f"target:{target.pk}", target.label))
    assert "Volume group ssu01-a-vg03 degraded" in text
    assert "(0x226C)" in text and "Drive failed: tray" in text
    neighbour = Target.objects.get(label="scratch-OST0001")
    assert "Recent array events" not in mailed(smtp, alert(f"target:{neighbour.pk}", "OST0001"))


def test_an_incident_mail_lists_the_events_of_its_members_at_most_five(smtp, drive_failed):
    now = time.time()
    for n in range(6):
        write_event(
            array="ssu01-a",
            component="array",
            ident="",
            sequence=50 + n,
            at=now - 30 + n,
            priority="informational",
            event_type="0x0001",
            description=f"Array's note {n}",
        )
    array = StorageArray.objects.get(name="ssu01-a")
    event = alert(f"storagearray:{array.pk}", "ssu01-a")
    group = IncidentGroup.objects.create(
        key="ssu:1", label="ssu01", severity=Severity.CRITICAL, status="firing"
    )
    member = {
        "event": event.pk,
        "object": "ssu01-a",
        "object_url": "/console/arrays/ssu01-a/",
        "rule": event.rule.name,
        "severity": Severity.CRITICAL,
        "since": datetime.now(UTC).isoformat(),
        "summary": event.summary,
        "muted": "",
        "state": "firing",
        "new": True,
        "resolved": None,
        "duration": None,
    }
    mail = GroupMail.objects.create(group=group, kind=GroupMailKind.FIRING, members=[member])
    Delivery.objects.create(group_mail=mail, address="ops@example.org")
    assert len(deliver_due().sent) == 1
    text = smtp.mailbox.messages[-1].get_body(preferencelist=("plain",)).get_content()
    after = text.split("newest first):")[1].strip().splitlines()
    listed = after[: after.index("")]
    assert len(listed) == 5
    assert "Array's note 5" in listed[0] and "array ssu01-a: Array's note 1" in listed[4]
    html = smtp.mailbox.messages[-1].get_body(preferencelist=("html",)).get_content()
    assert "<h3>Recent array events</h3>" in html and "Array&#x27;s note 5" in html


def test_a_mail_about_a_server_has_no_array_events_and_influxdb_never_holds_a_mail(
    smtp, rack_inventory, metrics_db, settings
):
    server = Server.objects.get(hostname="oss01")
    assert "Recent array events" not in mailed(smtp, alert(f"server:{server.pk}", "oss01"))
    answering = settings.INFLUXDB_URL
    settings.INFLUXDB_URL = "http://127.0.0.1:9"  # nothing listens there
    array = StorageArray.objects.get(name="ssu01-a")
    text = mailed(smtp, alert(f"storagearray:{array.pk}", "ssu01-a"))
    settings.INFLUXDB_URL = answering
    influx.ping()  # the outage noted ends here, not in the next test
    assert "The arrays' recent events could not be read: InfluxDB does not answer." in text
