"""The wizard takes each array's controllers' management addresses (checked at their field)
and the arrays' monitor password (kept encrypted, never in the spec), for the array collector
on the management server (issue 33)."""

from __future__ import annotations

import html

import pytest

from portal.inventory import models
from portal.jobs.models import Job
from portal.wizard.tests.test_wizard_steps import ARRAYS, _errors, _servers_step

pytestmark = pytest.mark.django_db

MANAGED = {
    **ARRAYS,
    "arrays-0-management_a": "10.20.1.21",
    "arrays-0-management_b": "10.20.1.22:8443",
    "arrays-1-management_a": "[fd00::31]:8443",
    "arrays-1-management_b": "ctl-b2.site",
}


@pytest.fixture
def operator(client, world):
    client.login(username="operator", password="pw-operator-123!")
    response = client.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    assert response.status_code == 302
    response = client.post("/ssus/add/servers/", _servers_step())
    assert response.status_code == 302, _errors(response)
    return client


def test_addresses_and_monitor_password_reach_the_inventory_the_password_encrypted(
    operator, django_capture_on_commit_callbacks
):
    response = operator.post("/ssus/add/arrays/", {**MANAGED, "monitor_password": "m0n {{ x }}"})
    assert response.status_code == 302, _errors(response)
    spec = operator.get("/ssus/add/spec/oss.json").content.decode()
    assert "10.20.1.22:8443" in spec and "m0n" not in spec
    with django_capture_on_commit_callbacks(execute=False):
        operator.post("/ssus/add/review/")
    assert Job.objects.exists()
    array = models.StorageArray.objects.get(name="ssu01-b")
    assert array.controller_addresses == ("[fd00::31]:8443", "ctl-b2.site")
    assert array.monitor_password == "m0n {{ x }}"
    assert "m0n" not in array.monitor_password_encrypted
    assert models.StorageArray.objects.get(name="mds01-a").controller_addresses == ()


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("arrays-0-management_b", "10.20.1.256", "octet 256 is above 255"),
        ("arrays-0-management_b", "", "give both controllers' addresses, or neither"),
        ("arrays-1-management_a", "ctl a:8443", "not an IPv4 address, an IPv6 address"),
    ],
)
def test_a_bad_address_is_shown_at_its_field_and_the_step_does_not_move_on(
    operator, field, value, words
):
    response = operator.post(
        "/ssus/add/arrays/", {**MANAGED, field: value, "monitor_password": "pw"}
    )
    assert response.status_code == 200
    assert words in html.unescape(response.content.decode())


def test_addresses_without_a_monitor_password_are_refused(operator):
    response = operator.post("/ssus/add/arrays/", MANAGED)
    assert response.status_code == 200
    assert "the array collector logs in" in html.unescape(response.content.decode())
