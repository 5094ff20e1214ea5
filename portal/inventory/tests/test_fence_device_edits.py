"""An administrator changes a server's BMC address in the Django admin: the next provisioning run
fences the server through the new address and the partner's sensor polls the same one; an
address that is another server's is refused, naming that server. The inventory API changes
nothing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from django.conf import settings

from portal.inventory.models import Server, ServerPair
from portal.inventory.provisioning import KIND, playbook_variables
from portal.inventory.services import ansible_inventory, save_plans
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
    # The admin is told when it takes effect, and which run to start.
    page = response.content.decode()
    assert "BMC address of oss01 changed" in page
    assert f"/jobs/{built.pk}/" in page


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
