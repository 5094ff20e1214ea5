"""The appliance's default database is SQLite, written at once by the portal, the worker and
beat. A transaction that reads first and writes later (an alert round: it reads the open events,
then updates them) while another connection commits must wait for the lock, not fail with
"database is locked": SQLite returns that at once, without its busy timeout, when a reader
asks to write while another connection holds the write lock, as waiting could deadlock."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reading_transaction_that_writes_later_waits_for_another_writer():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's locking only")
    read, writer_started = threading.Event(), threading.Event()
    errors: list[Exception] = []

    def round_of_alerts() -> None:
        try:
            with transaction.atomic():
                Group.objects.count()  # the round reads what it will update
                read.set()
                writer_started.wait(5)
                writer_started.wait(0.5)  # the other writer has asked for the lock meanwhile
                Group.objects.create(name="written by the round")
        except Exception as error:  # noqa: BLE001 - the test reports it
            errors.append(error)
        finally:
            connection.close()

    def page_that_saves() -> None:
        try:
            read.wait(5)
            writer_started.set()
            with transaction.atomic():
                Group.objects.create(name="written by a page")
        except Exception as error:  # noqa: BLE001 - the test reports it
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=round_of_alerts), threading.Thread(target=page_that_saves)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert set(Group.objects.values_list("name", flat=True)) == {
        "written by the round",
        "written by a page",
    }
