"""The alert mail about a target or a server quotes what the kernel said about it in the minutes
before (the newest few lines), sent through a real SMTP server on loopback; an older line, or a
line about another target, is not quoted."""

from __future__ import annotations

import time

import pytest

from portal.alerts.choices import ConditionKind, Severity, TransitionKind
from portal.alerts.models import Delivery, Event, Rule, Transition
from portal.alerts.services.outbox import deliver_due
from portal.health.tests.test_kernel_log_pages import BOOTED, write_kernel_logs
from portal.inventory.models import Server, Target

pytestmark = [pytest.mark.services, pytest.mark.django_db]

NOW_AFTER_BOOT = int(time.time()) - BOOTED


def alert(key: str, label: str) -> Event:
    rule = Rule.objects.get_or_create(
        name="Target not green", severity=Severity.CRITICAL, condition=ConditionKind.HEALTH
    )[0]
    return Event.objects.create(
        rule=rule,
        severity=rule.severity,
        fingerprint=key,
        object_label=label,
        object_key=key,
        summary=f"{label}: lost its service",
    )


def mailed(smtp, event: Event) -> tuple[str, str]:
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    Delivery.objects.create(transition=transition, address="ops@example.org")
    assert len(deliver_due().sent) == 1
    message = smtp.mailbox.messages[-1]
    return (
        message.get_body(preferencelist=("plain",)).get_content(),
        message.get_body(preferencelist=("html",)).get_content(),
    )


@pytest.fixture
def crashed(rack_inventory, metrics_db, tmp_path):
    """oss01 crashed 3 minutes ago: oss02 logged the recovery of OST0003; an hour-old line and
    a line about OST0005 around them."""
    recent = NOW_AFTER_BOOT - 180
    write_kernel_logs(
        tmp_path,
        [
            ("oss02", 5, 6, "Lustre: scratch-OST0003: Not available for connect from 0@lo"),
            ("oss02", recent, 4, "Lustre: scratch-OST0003: Will be in recovery for at least 5:00"),
            ("oss02", recent + 30, 6, "Lustre: scratch-OST0003: Recovery over after 0:30"),
            ("oss02", recent + 40, 3, "LustreError: 11-0: scratch-OST0005-osc: rc = -19"),
        ],
    )


def test_the_mail_about_a_target_quotes_its_recent_kernel_lines(smtp, crashed):
    target = Target.objects.get(label="scratch-OST0003")
    text, html = mailed(smtp, alert(f"target:{target.pk}", target.label))
    quoted = text.split("What the kernel said (the 15 minutes before this mail, newest first):")
    after = quoted[1].strip().splitlines()
    lines = after[: [line.strip() for line in after].index("")]
    assert "oss02  info  Lustre: scratch-OST0003: Recovery over after 0:30" in lines[0]
    assert "oss02  warning  Lustre: scratch-OST0003: Will be in recovery" in lines[1]
    assert len(lines) == 2  # not the hour-old line, not OST0005's
    assert "<h3>What the kernel said</h3>" in html and "Recovery over after 0:30" in html


def test_the_mail_about_a_server_quotes_all_of_its_lines_and_another_none(smtp, crashed):
    oss02 = Server.objects.get(hostname="oss02")
    text, _html = mailed(smtp, alert(f"server:{oss02.pk}", "oss02"))
    assert "LustreError: 11-0: scratch-OST0005-osc: rc = -19" in text
    assert text.count("  oss02  ") == 3
    oss01 = Server.objects.get(hostname="oss01")
    text, _html = mailed(smtp, alert(f"server:{oss01.pk}", "oss01"))
    assert "What the kernel said" not in text


def test_an_error_is_quoted_before_newer_lines_that_would_push_it_out(
    smtp, rack_inventory, metrics_db, tmp_path
):
    """The group under OST0004 lost: its server's error, then more recovery lines about it
    than the mail quotes (its neighbours moving to the partner, say)."""
    lost = NOW_AFTER_BOOT - 300
    error = (
        "LustreError: 7061:0:(ofd_dev.c:1612:ofd_create_hdl()) scratch-OST0004: "
        "unable to precreate: rc = -30"
    )
    chatter = [
        ("oss01", lost + 10 + n, 6, f"Lustre: scratch-OST0004: Recovery over after 0:{n:02d}")
        for n in range(12)
    ]
    write_kernel_logs(tmp_path, [("oss01", lost, 3, error), *chatter])
    target = Target.objects.get(label="scratch-OST0004")
    text, _html = mailed(smtp, alert(f"target:{target.pk}", target.label))
    after = [line.strip() for line in text.split("newest first):")[1].strip().splitlines()]
    quoted = after[: after.index("")]
    assert len(quoted) == 8, text
    assert "unable to precreate: rc = -30" in quoted[-1], quoted  # the oldest, shown last
    assert "Recovery over after 0:11" in quoted[0]  # then the newest of the others
