"""What the provisioning playbooks are given: the cluster logs in to the BMCs as the user the
administrator entered, and the BMC passwords travel only as the secret files ha.yml copies."""

from __future__ import annotations

import json

import pytest

from portal.inventory.models import ServerPair
from portal.inventory.provisioning import fence_secrets, playbook_variables
from portal.inventory.services import save_plans
from portal.wizard.tests.conftest import BMC, load_spec

pytestmark = pytest.mark.django_db


def test_the_fence_devices_use_the_bmc_user_and_never_the_password():
    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")], BMC)
    variables = playbook_variables(list(ServerPair.objects.all()))
    cib = variables["ostara_cibs"]["ssu01"]
    assert 'name="username" value="root"' in cib
    assert "secret-oss01" not in cib
    # No password in any variable (ansible-runner keeps them in a file of its own).
    assert "secret-" not in json.dumps(variables)
    assert fence_secrets(list(ServerPair.objects.all()))["bmc-oss02"] == "secret-oss02\n"
    # LUNs number each pair's volumes; every planned volume is mapped.
    layout = variables["ostara_layouts"]["ssu01"]
    luns = [v["lun"] for g in layout["volume_groups"] for v in g["volumes"]]
    assert sorted(luns) == list(range(24))
    assert layout["host_group"] == "ssu01" and layout["hosts"] == ["oss01", "oss02"]
