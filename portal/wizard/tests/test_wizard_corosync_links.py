"""The servers step asks for Corosync's two link addresses: a bad one is named on its field,
the review lists each server's links, and warns when a pair would run on one link."""

from __future__ import annotations

import pytest

from portal.inventory import models
from portal.wizard.tests.test_wizard_steps import ARRAYS, _errors, _servers_step

pytestmark = pytest.mark.django_db

LINKS = {
    "mds0": ("169.254.1.1", "169.254.2.1"),
    "mds1": ("169.254.1.2", "169.254.2.2"),
    "oss0": ("169.254.1.11", "169.254.2.11"),
    "oss1": ("169.254.1.12", "169.254.2.12"),
}


@pytest.fixture
def operator(client, world):
    client.login(username="operator", password="pw-operator-123!")
    client.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    return client


def _with_links(links=LINKS) -> dict:
    data = _servers_step()
    for prefix, (mgmt, heartbeat) in links.items():
        data[f"{prefix}-mgmt_address"] = mgmt
        data[f"{prefix}-heartbeat_address"] = heartbeat
    return data


def test_both_links_reach_the_review_and_the_inventory(operator):
    assert operator.post("/ssus/add/servers/", _with_links()).status_code == 302
    assert operator.post("/ssus/add/arrays/", ARRAYS).status_code == 302
    page = operator.get("/ssus/add/review/").content.decode()
    assert "oss02 link 0 169.254.1.12, link 1 169.254.2.12" in page
    assert "one heartbeat link" not in page

    response = operator.post("/ssus/add/review/")
    assert response.status_code == 302, _errors(response)
    server = models.Server.objects.get(hostname="mds02")
    assert (server.mgmt_address, server.heartbeat_address) == ("169.254.1.2", "169.254.2.2")


def test_without_links_the_review_warns_of_a_single_link(operator):
    assert operator.post("/ssus/add/servers/", _servers_step()).status_code == 302
    assert operator.post("/ssus/add/arrays/", ARRAYS).status_code == 302
    page = operator.get("/ssus/add/review/").content.decode()
    assert "Warning: one heartbeat link: a single switch failure splits the pair" in page
    assert "mds01 link 0 on its host name" in page


@pytest.mark.parametrize(
    ("links", "field", "message"),
    [
        (
            {"oss1": ("169.254.1.12", "hb-oss02")},
            "oss1-heartbeat_address",
            "is not an IPv4 or IPv6 address",
        ),
        (
            {"oss1": ("169.254.1.12", "169.254.1.12")},
            "oss1-heartbeat_address",
            "is also the management address",
        ),
        (
            {"oss1": ("169.254.1.12", "")},
            "oss1-heartbeat_address",
            "give both link addresses, or neither",
        ),
    ],
)
def test_a_bad_link_address_is_named_on_its_field(operator, links, field, message):
    response = operator.post("/ssus/add/servers/", _with_links({**LINKS, **links}))
    assert response.status_code == 200
    form = response.context["pairs"]["oss"][1][1]
    assert message in " ".join(form.errors[field.split("-", 1)[1]])
