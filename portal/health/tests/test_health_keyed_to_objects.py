"""The health cache and history are keyed to inventory objects, not to names: an object renamed
keeps its colour and its history, and its pages find them through the object."""

from __future__ import annotations

import pytest

from portal.health import rules
from portal.health.models import HealthStatus, StatusChange
from portal.health.services.evaluation import store
from portal.health.services.facts import object_key
from portal.inventory.models import Target

pytestmark = pytest.mark.django_db


def tree(name: str, status: str, key: str, reasons: tuple[str, ...] = ()) -> list[rules.Node]:
    target = rules.Node("target", name, status, list(reasons), key=key)
    return [rules.Node("filesystem", "scratch", children=[target], key="filesystem:1")]


def test_a_renamed_object_keeps_its_row_and_its_next_change_is_a_change_not_a_first_colour():
    store(tree("scratch-OST0000", "green", "target:7"))
    assert StatusChange.objects.count() == 0
    changes = store(tree("other-OST0000", "orange", "target:7", ("degraded",)))
    assert [(c.key, c.name, c.old, c.new, c.initial) for c in changes] == [
        ("target:7", "other-OST0000", "green", "orange", False)
    ]
    row = HealthStatus.objects.get(key="target:7")
    assert (row.name, row.status, row.parent_key) == ("other-OST0000", "orange", "filesystem:1")
    assert HealthStatus.objects.filter(kind="target").count() == 1


def test_two_objects_of_one_name_keep_two_rows():
    target = rules.Node("target", "scratch-OST0000", "green", key="target:1")
    twin = rules.Node("target", "scratch-OST0000", "red", ["not mounted"], key="target:2")
    store([rules.Node("filesystem", "scratch", children=[target, twin], key="filesystem:1")])
    assert sorted(HealthStatus.objects.filter(kind="target").values_list("key", "status")) == [
        ("target:1", "green"),
        ("target:2", "red"),
    ]


def test_the_target_page_finds_the_mgs_status_by_the_object(client, world, rack_inventory):
    mgt = Target.objects.get(kind="MGT")
    node = rules.Node(
        "target", f"{mgt.filesystem.name}-MGS", "orange", ["hot"], key=object_key(mgt)
    )
    store([rules.Node("filesystem", mgt.filesystem.name, children=[node], key="filesystem:1")])
    client.force_login(world["viewer"])
    page = client.get(f"/health/targets/{mgt.label}/").content.decode()
    assert "hot" in page
