"""An administrator changes a server's BMC address in the Django admin: the next provisioning run
fences the server through the new address and the partner's sensor polls the same one; an
address that is another server's is refused, naming that server. The inventory API changes
nothing."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET

import pytest
from django.conf import settings

from portal.inventory.models import Server, ServerPair, StorageArray
from portal.inventory.provisioning import (
    FENCING_KIND,
    KIND,
    ProvisioningContext,
    building,
    playbook_variables,
)
from portal.inventory.services import ansible_inventory, save_plans
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.services import create_job

pytestmark = pytest.mark.django_db

BMC = {host: ("root", f"secret-{host}") for host in ("mds01", "mds02", "oss01", "oss02")}


@pytest.fixture
def built(world, mds_spec, ssu_spec):
    """The MDS pair and the SSU as a provisioning job confirmed them."""
    pairs = save_plans([mds_spec, ssu_spec], BMC)
    return create_job(KIND, "Provision mds01 and ssu01", pairs=pairs)


def _edit_in_the_admin(client, host: str, **fields):
    client.login(username="admin", password="pw-admin-123!")
    server = Server.objects.get(hostname=host)
    form = {
        # What the page shows read-only is sent too: the admin must ignore it.
        "hostname": server.hostname,
        "role": server.role,
        "pair": server.pair_id,
        "lnet_nids": json.dumps(server.lnet_nids),
        "bmc_address": server.bmc_address,
        "bmc_username": server.bmc_username,
        "pdu_outlet": server.pdu_outlet,
        **fields,
    }
    return client.post(f"/admin/inventory/server/{server.pk}/change/", form, follow=True)


def _fence_address(cib: str, hostname: str) -> str:
    device = ET.fromstring(cib).find(f".//primitive[@id='fence-{hostname}-ipmi']")
    return device.find("instance_attributes/nvpair[@name='ip']").get("value")


def test_the_next_run_fences_and_polls_the_bmc_address_the_admin_entered(client, built):
    response = _edit_in_the_admin(client, "oss01", bmc_address="10.20.0.99")

    assert response.status_code == 200
    assert Server.objects.get(hostname="oss01").bmc_address == "10.20.0.99"
    pairs = list(ServerPair.objects.order_by("kind", "name"))
    cib = playbook_variables(pairs)["ostara_cibs"]["ssu01"]
    assert _fence_address(cib, "oss01") == "10.20.0.99"
    assert _fence_address(cib, "oss02") == "10.20.0.12"
    # The partner's sensor is configured from the same rows (sensor.yml's bmc_command).
    hosts = ansible_inventory(pairs, settings.VIRTUAL_RACK)["all"]["hosts"]
    assert hosts["oss02"]["ostara_partner_bmc"] == "10.20.0.99"
    # The pair is not built yet: the admin is told its provisioning job applies the change.
    page = response.content.decode()
    assert "BMC address of oss01 changed" in page
    assert "its provisioning job applies the change when it runs" in page
    assert not Job.objects.filter(kind=FENCING_KIND).exists()


def test_a_change_to_a_built_pair_starts_the_job_that_pushes_its_fencing(client, built):
    Job.objects.filter(pk=built.pk).update(state=JobState.SUCCEEDED)

    response = _edit_in_the_admin(client, "oss02", bmc_address="10.20.0.98", pdu_outlet="pdu1:9")

    (job,) = Job.objects.filter(kind=FENCING_KIND)
    assert list(job.pairs.values_list("name", flat=True)) == ["ssu01"]
    # Only what reaches the running cluster and the sensors: no array, format or survey.
    assert list(job.steps.order_by("position").values_list("name", flat=True)) == [
        "ha",
        "sensor",
        "verify",
    ]
    page = response.content.decode()
    assert "BMC address, PDU outlet of oss02 changed" in page
    assert f'href="/jobs/{job.pk}/"' in page
    # What that job pushes: the CIB built from the rows as they are now.
    cib = ProvisioningContext.for_job(job).variables["ostara_cibs"]["ssu01"]
    assert _fence_address(cib, "oss02") == "10.20.0.98"
    device = ET.fromstring(cib).find(".//primitive[@id='fence-oss02-pdu']")
    assert device.find("instance_attributes/nvpair[@name='plug']").get("value") == "9"
    # oss01's sensor polls the new outlet with the device's own agent, user and secret script.
    status = ProvisioningContext.for_job(job).variables["ostara_pdu_status"]["oss02"]
    assert shlex.split(status) == [
        "fence_apc_snmp",
        "--ip=pdu1",
        "--plug=9",
        "--snmp-version=3",
        "--snmp-sec-level=authPriv",
        "--snmp-auth-prot=SHA",
        "--snmp-priv-prot=AES",
        "--username=ostara-fence",
        "--password-script=/usr/libexec/ostara/fence-secret pdu-pdu1-auth",
        "--snmp-priv-passwd-script=/usr/libexec/ostara/fence-secret pdu-pdu1-priv",
        "--action=status",
    ]
    # It pushes the pair's configuration and restarts its sensors: the pair is marked moving.
    ssu = job.pairs.get()
    assert job.marks == {f"serverpair:{ssu.pk}": "moves"}
    # Provisioned again, a built pair is moved; a pair never built is being built (grey).
    mds = ServerPair.objects.get(name="mds01")
    Job.objects.filter(pk=built.pk).update(state=JobState.FAILED)
    assert building([ssu, mds]) == {
        f"serverpair:{ssu.pk}": "builds",
        f"serverpair:{mds.pk}": "builds",
    }
    Job.objects.filter(pk=built.pk).update(state=JobState.SUCCEEDED)
    assert building([ssu]) == {f"serverpair:{ssu.pk}": "moves"}


def test_every_inventory_page_of_the_admin_is_shown_and_only_fence_devices_change(client, built):
    """...and how the array collector reaches an array (issue 33): never the planned layout."""
    client.login(username="admin", password="pw-admin-123!")
    for page in ("ssu", "enclosuremodel", "storagearray", "volumegroup", "drive", "target"):
        assert client.get(f"/admin/inventory/{page}/").status_code == 200, page
    array = StorageArray.objects.first()
    assert client.get(f"/admin/inventory/storagearray/{array.pk}/change/").status_code == 200
    posted = client.post(
        f"/admin/inventory/storagearray/{array.pk}/change/",
        {"drive_tb": "9", "monitor_user": "monitor", "enclosures-TOTAL_FORMS": "0",
         "enclosures-INITIAL_FORMS": "0"},
    )  # fmt: skip
    assert posted.status_code == 302
    assert StorageArray.objects.get(pk=array.pk).drive_tb == array.drive_tb
    assert client.post(f"/admin/inventory/volumegroup/{array.pk}/change/", {}).status_code == 403


def test_a_clash_already_in_the_rows_is_named_not_a_server_error(client, built):
    # Two servers with one NID (an inventory restored from before the check): the admin
    # explains instead of failing when either server's fence devices are edited.
    Server.objects.filter(hostname="oss02").update(lnet_nids=["10.10.0.11@o2ib"])

    response = _edit_in_the_admin(client, "oss01", pdu_outlet="pdu1:7")

    assert response.status_code == 200
    page = response.content.decode()
    assert "lnet_nids: " in page and "10.10.0.11@o2ib" in page
    assert Server.objects.get(hostname="oss01").pdu_outlet != "pdu1:7"


def test_an_address_of_another_server_is_refused_naming_it(client, built):
    response = _edit_in_the_admin(client, "oss01", bmc_address="10.20.0.2")

    page = response.content.decode()
    assert "10.20.0.2 is already the BMC of mds02 in mds01" in page
    assert Server.objects.get(hostname="oss01").bmc_address == "10.20.0.11"
    cib = playbook_variables([ServerPair.objects.get(name="ssu01")])["ostara_cibs"]["ssu01"]
    assert _fence_address(cib, "oss01") == "10.20.0.11"


def test_a_pdu_outlet_of_another_server_and_a_malformed_address_are_refused(client, built):
    page = _edit_in_the_admin(client, "oss01", pdu_outlet="pdu2:3").content.decode()
    assert "pdu2:3 is already the PDU outlet of oss02 in ssu01" in page

    page = _edit_in_the_admin(client, "oss01", bmc_address="-oProxyCommand=x").content.decode()
    assert Server.objects.get(hostname="oss01").bmc_address == "10.20.0.11"
    assert "errornote" in page


def test_what_the_targets_carry_is_shown_and_not_changed_in_the_admin(client, built):
    response = _edit_in_the_admin(
        client, "oss01", hostname="oss09", lnet_nids='["10.10.0.99@o2ib"]'
    )
    assert response.status_code == 200
    server = Server.objects.get(hostname="oss01")
    assert server.lnet_nids == ["10.10.0.11@o2ib"]
    pair = ServerPair.objects.get(name="ssu01")
    assert client.post(f"/admin/inventory/serverpair/{pair.pk}/change/", {}).status_code == 403
