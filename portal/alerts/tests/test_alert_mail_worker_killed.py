"""A worker process killed in the middle of sending alert mail: the mail is neither lost nor
doubled. The worker is a real process on the test database, the mail server a real SMTP server
on loopback that had not accepted the message when the worker died."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from portal.alerts.choices import ConditionKind, DeliveryStatus, TransitionKind
from portal.alerts.models import Delivery, Event, Rule, Transition
from portal.alerts.services.outbox import STALE_CLAIM_SECONDS, deliver_due
from portal.conftest import REPO

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

WORKER = "from portal.alerts.services.outbox import deliver_due; deliver_due()"


def test_a_worker_killed_while_sending_loses_nothing_and_doubles_nothing(smtp):
    rule = Rule.objects.create(
        name="Server down", severity="critical", condition=ConditionKind.HEALTH
    )
    event = Event.objects.create(
        rule=rule,
        severity=rule.severity,
        fingerprint="server:1",
        object_label="oss01",
        summary="powered off (fenced)",
    )
    transition = Transition.objects.create(event=event, kind=TransitionKind.FIRING)
    Delivery.objects.create(transition=transition, address="ops@example.org")

    smtp.mailbox.hold = threading.Event()
    env = dict(
        os.environ,
        DATABASE_URL=f"sqlite:///{django_settings.DATABASES['default']['NAME']}",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(smtp.port),
        DJANGO_SETTINGS_MODULE="portal.settings",
    )
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", WORKER], cwd=REPO, env=env
    )
    try:
        assert smtp.mailbox.holding.wait(60), "the worker never reached the mail server"
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    finally:
        if worker.poll() is None:
            worker.kill()
    smtp.mailbox.hold.set()  # the server gives up on the dead connection; nothing kept
    smtp.mailbox.hold = None

    delivery = Delivery.objects.get()
    assert delivery.status == DeliveryStatus.SENDING  # claimed by the dead worker
    assert deliver_due().sent == []  # it might still be sending: nobody else sends it yet
    later = timezone.now() + timedelta(seconds=STALE_CLAIM_SECONDS + 1)
    assert len(deliver_due(later).sent) == 1
    assert deliver_due(later + timedelta(hours=1)).sent == []
    assert [m["Subject"] for m in smtp.mailbox.messages] == [
        "[Ostara CRITICAL] Firing: oss01 - Server down"
    ]
