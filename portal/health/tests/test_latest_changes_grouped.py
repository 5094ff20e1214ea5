""" "Latest changes" as a person reads them: a first colour is not "back to normal", and the
same change of many objects in one evaluation is one row that opens to list them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from portal.health import rules
from portal.health.models import HealthStatus, StatusChange
from portal.health.services.changes import grouped, latest
from portal.health.services.evaluation import store

pytestmark = pytest.mark.django_db


def targets_of(ssu: str, count: int, first: int = 0) -> list[str]:
    return [f"scratch-OST{index:04x}" for index in range(first, first + count)]


def place(names: list[str], parent: str) -> None:
    HealthStatus.objects.bulk_create(
        HealthStatus(
            key=f"target/{name}",
            kind="target",
            name=name,
            status="green",
            parent_kind="ssu",
            parent_name=parent,
            since=timezone.now(),
        )
        for name in names
    )


def record(names, old, new, at, reasons=(), initial=False):
    StatusChange.objects.bulk_create(
        StatusChange(
            kind="target",
            name=name,
            old=old,
            new=new,
            reasons=list(reasons),
            at=at,
            initial=initial,
        )
        for name in names
    )


def test_a_first_evaluation_of_24_targets_is_one_row_and_a_real_recovery_stays_apart():
    now = timezone.now()
    ssu02 = targets_of("ssu02", 24, 24)
    place(ssu02, "ssu02")
    record(ssu02, "grey", "green", now - dt.timedelta(minutes=5), initial=True)
    record(
        ["scratch-OST0003"],
        "green",
        "orange",
        now - dt.timedelta(minutes=3),
        ["volume group ssu01-a-vg03 is degraded"],
    )
    record(["scratch-OST0003"], "orange", "green", now)
    groups = latest(15)
    assert [(g.old, g.new, len(g.names), g.initial) for g in groups] == [
        ("orange", "green", 1, False),
        ("green", "orange", 1, False),
        ("grey", "green", 24, True),
    ]
    assert groups[0].back_to_normal and not groups[2].back_to_normal
    assert groups[2].parent == "ssu02" and groups[2].kind_label == "targets"


def test_the_dashboard_shows_the_group_and_never_calls_a_first_colour_back_to_normal(client, world):
    ssu01 = targets_of("ssu01", 24)
    place(ssu01, "ssu01")
    record(ssu01, "grey", "green", timezone.now(), initial=True)
    client.force_login(world["viewer"])
    page = client.get("/health/overview/").content.decode()
    assert "24 targets of ssu01" in page
    assert "first evaluation" in page
    assert "back to normal" not in page
    assert page.count('class="change-group"') == 1
    assert "scratch-OST0017</a>" in page  # listed when opened


def test_changes_with_different_reasons_are_not_grouped():
    now = timezone.now()
    record(["scratch-OST0001"], "green", "orange", now, ["volume group ssu01-a-vg01 is degraded"])
    record(["scratch-OST0002"], "green", "orange", now, ["volume group ssu01-a-vg02 is degraded"])
    assert len(grouped(StatusChange.objects.all(), 15)) == 2


def test_a_new_or_not_in_service_object_records_its_first_colour_as_initial():
    def tree(*targets):
        return [rules.Node("filesystem", "scratch", children=list(targets))]

    store(
        tree(
            rules.Node("target", "scratch-OST0000", "grey"),
            rules.Node("target", "scratch-OST0001", "red", ["not mounted on any server"]),
        )
    )
    (appeared,) = StatusChange.objects.all()
    assert (appeared.name, appeared.old, appeared.new, appeared.initial) == (
        "scratch-OST0001",
        "",
        "red",
        True,
    )
    changed = store(
        tree(
            rules.Node("target", "scratch-OST0000", "green"),
            rules.Node("target", "scratch-OST0001", "orange", ["degraded"]),
        )
    )
    assert sorted((c.name, c.old, c.new, c.initial) for c in changed) == [
        ("scratch-OST0000", "grey", "green", True),  # into service: its first colour
        ("scratch-OST0001", "red", "orange", False),
    ]


def test_an_ssu_in_the_changes_is_written_ssu_not_ssu_capitalised(client, world):
    StatusChange.objects.create(
        kind="ssu",
        name="ssu01",
        old="green",
        new="orange",
        reasons=["array ssu01-a is degraded"],
        at=timezone.now(),
    )
    client.force_login(world["viewer"])
    page = client.get("/health/overview/").content.decode()
    assert "SSU <a" in page and "Ssu" not in page
