"""Every job builds from the inventory rows: the plan read back from them is the plan that was
confirmed, and a job's variables do not depend on the stored record of it."""

from __future__ import annotations

import importlib
import json

import pytest
from django.apps import apps as django_apps

from portal.inventory.models import Drive, Server, ServerPair, StorageArray
from portal.inventory.provisioning import KIND, ProvisioningContext, playbook_variables
from portal.inventory.services import RowsDisagree, pair_plan, save_plans
from portal.inventory.tests.conftest import load_spec
from portal.jobs.registry import StepFailed
from portal.jobs.services import create_job

pytestmark = pytest.mark.django_db


def _unusual_ssu() -> dict:
    """An SSU whose spec is written in an order the rows do not sort by: servers and arrays
    out of name order, an odd first OST index, fewer drives than slots, an LNet interface,
    and the drive size as the wizard writes it (a float)."""
    spec = load_spec("me4084_ssu")
    spec["servers"].reverse()
    spec["arrays"].reverse()
    spec["first_ost_index"] = 25
    spec["arrays"][0]["drives"] = 74
    for array in spec["arrays"]:
        array["drive_tb"] = 8.0
    for server in spec["servers"]:
        server["lnet_interface"] = "ib0"
    return spec


def test_the_plan_read_from_the_rows_is_the_plan_confirmed():
    pairs = save_plans([load_spec("mds_pair"), load_spec("reference_ssu"), _unusual_ssu()])
    for pair in pairs:
        pair.refresh_from_db()
        assert json.dumps(pair_plan(pair)) == json.dumps(pair.plan), pair.name


def test_no_job_reads_the_stored_record_of_the_plan():
    save_plans([load_spec("mds_pair"), load_spec("reference_ssu"), _unusual_ssu()])
    before = json.dumps(playbook_variables(list(ServerPair.objects.all())))
    ServerPair.objects.update(plan={"servers": [], "arrays": "not a plan"})
    assert json.dumps(playbook_variables(list(ServerPair.objects.all()))) == before


def test_rows_that_are_not_the_planners_layout_are_refused_by_name():
    (pair,) = save_plans([load_spec("mds_pair")])
    # A drive of the volume group recorded as unused: the planner would still use it.
    Drive.objects.filter(volume_group__name="mds01-a-vg00", drawer=1, slot=7).update(
        volume_group=None
    )
    with pytest.raises(RowsDisagree, match="volume groups mds01-a-vg00 are not"):
        pair_plan(pair)
    # A job on such rows fails its step with that reason, not with a traceback.
    job = create_job(KIND, "Provision mds01", pairs=[pair])
    with pytest.raises(StepFailed, match="volume groups mds01-a-vg00 are not"):
        ProvisioningContext.for_job(job)


def test_an_appliance_confirmed_before_the_rows_held_the_plan_keeps_its_plan():
    pairs = save_plans([load_spec("mds_pair"), load_spec("reference_ssu"), _unusual_ssu()])
    before = json.dumps(playbook_variables(pairs))
    # The rows as the first migration left them: what only the record held, not filled in.
    Server.objects.update(lnet_interface="")
    StorageArray.objects.update(drive_tb_as_given="", installed_drives=0, global_spares=0)
    migration = importlib.import_module("portal.inventory.migrations.0002_rows_hold_the_plan")
    migration.from_the_confirmed_plans(django_apps, None)
    assert json.dumps(playbook_variables(list(ServerPair.objects.all()))) == before
