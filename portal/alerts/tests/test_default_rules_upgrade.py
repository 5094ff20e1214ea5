"""An appliance upgraded to incident groups gets the new default rule "Redundancy lost", for
the people its "Anything red" rule tells; a default rule its administrator deleted stays
deleted (migration 0007's data step, run as the upgrade runs it)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from portal.alerts.models import Rule

pytestmark = pytest.mark.django_db

upgrade = importlib.import_module("portal.alerts.migrations.0007_default_rule_redundancy_lost")


def test_the_upgrade_adds_redundancy_lost_for_the_people_anything_red_tells(world):
    Rule.objects.filter(builtin__in=["redundancy-lost", "temperature"]).delete()
    red = Rule.objects.get(builtin="anything-red")
    red.extra_addresses = "storage-team@example.org"
    red.save()
    red.recipients.set([world["operator"]])
    upgrade.install(apps, None)
    new = Rule.objects.get(builtin="redundancy-lost")
    assert new.extra_addresses == "storage-team@example.org"
    assert list(new.recipients.all()) == [world["operator"]]
    assert not Rule.objects.filter(builtin="temperature").exists()  # deleted, stays so
    upgrade.install(apps, None)  # run again: nothing more
    assert Rule.objects.filter(builtin="redundancy-lost").count() == 1
