"""Migration 0005: an array's single pinned certificate (from before each controller had its
own) becomes both controllers' pins, a list of two becomes A's and B's in order; none stays
none, so the sensor step pins it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("inventory", "0004_array_rest_management")]
AFTER = [("inventory", "0005_pin_per_controller")]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_an_arrays_pins_move_to_its_controllers():
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        filesystem = old.get_model("inventory", "Filesystem").objects.create(
            name="scratch", mgs_nids=["10.10.0.1@o2ib"]
        )
        pair = old.get_model("inventory", "ServerPair").objects.create(
            name="ssu01", kind="oss", filesystem=filesystem, plan={}
        )
        arrays = old.get_model("inventory", "StorageArray").objects
        pins = {"ssu01-a": "ab" * 32, "ssu01-b": f"{'cd' * 32} {'ef' * 32}", "ssu01-c": ""}
        for name, pinned in pins.items():
            arrays.create(name=name, pair=pair, drive_tb=4, certificate_sha256=pinned)

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        moved = {
            a.name: (a.certificate_a_sha256, a.certificate_b_sha256)
            for a in new.get_model("inventory", "StorageArray").objects.all()
        }
        assert moved == {
            "ssu01-a": ("ab" * 32, "ab" * 32),
            "ssu01-b": ("cd" * 32, "ef" * 32),
            "ssu01-c": ("", ""),
        }
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
