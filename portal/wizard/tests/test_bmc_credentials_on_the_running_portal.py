"""BMC credentials through the running portal (issue 28, findings 1 and 5): an operator's
browser posts the wizard's servers step over HTTP. A BMC user that ipmitool would read as an
option and a password the fence agents could not read back are refused next to their field; a
password of any printable text, a template included, is kept exactly and reaches the playbooks
only as the secret file ha.yml copies, never as a variable ansible could render."""

from __future__ import annotations

import json
import re

import pytest
import requests

from portal.inventory import provisioning
from portal.inventory.models import Server, ServerPair
from portal.inventory.provisioning import fence_secrets, playbook_variables
from portal.inventory.services import ansible_inventory
from portal.wizard.tests.test_wizard_steps import ARRAYS, _servers_step

pytestmark = pytest.mark.django_db

TEMPLATE_PASSWORD = "{{ lookup('pipe','id') }}{% raw %}"


class Browser:
    """The operator's browser: a session cookie and the CSRF token every form carries."""

    def __init__(self, url: str, session_id: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.cookies.set("sessionid", session_id)

    def post(self, path: str, data: dict) -> requests.Response:
        if "csrftoken" not in self.session.cookies:
            self.session.get(self.url + "/ssus/add/filesystem/", timeout=60)
        data = {**data, "csrfmiddlewaretoken": self.session.cookies["csrftoken"]}
        return self.session.post(self.url + path, data=data, allow_redirects=False, timeout=60)


@pytest.fixture
def queued(monkeypatch) -> list:
    """The jobs a confirm hands to the queue: kept here, so no provisioning job of this test
    reaches Redis and a worker that other tests share."""
    handed: list = []
    monkeypatch.setattr(provisioning, "enqueue", handed.append)
    return handed


@pytest.fixture
def browser(live_server, client, world, queued) -> Browser:
    client.login(username="operator", password="pw-operator-123!")
    browser = Browser(live_server.url, client.cookies["sessionid"].value)
    response = browser.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    assert response.status_code == 302, response.text[-2000:]
    return browser


def _field_error(page: str, field: str) -> str:
    """The text of the error shown next to ``field`` (empty when there is none)."""
    match = re.search(rf'id="id_{field}_errors"[^>]*>(.*?)</', page, re.S)
    return match.group(1) if match else ""


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("oss0-bmc_user", "-x", "begins with &#x27;-&#x27;"),
        ("mds1-bmc_user", "--help", "begins with &#x27;-&#x27;"),
        ("oss1-bmc_password", "line\nbreak", "control or invisible character"),
        ("oss1-bmc_password", "ends with a space ", "begins or ends with a space"),
    ],
)
def test_a_bmc_user_or_password_the_fence_agents_would_misread_is_refused_at_its_field(
    browser, field, value, reason
):
    servers = {**_servers_step(), field: value}
    response = browser.post("/ssus/add/servers/", servers)
    assert response.status_code == 200
    assert reason in _field_error(response.text, field), response.text[-3000:]


def test_a_template_as_bmc_password_is_kept_exactly_and_reaches_ansible_only_as_a_file(
    browser, queued
):
    servers = _servers_step()
    for position in (0, 1):
        servers[f"oss{position}-bmc_password"] = TEMPLATE_PASSWORD
    assert browser.post("/ssus/add/servers/", servers).status_code == 302
    assert browser.post("/ssus/add/arrays/", ARRAYS).status_code == 302
    assert browser.post("/ssus/add/review/", {}).status_code == 302
    assert [job.kind for job in queued] == [provisioning.KIND]

    assert Server.objects.get(hostname="oss02").bmc_password == TEMPLATE_PASSWORD
    pairs = list(ServerPair.objects.order_by("kind", "name"))
    assert fence_secrets(pairs)["bmc-oss02"] == TEMPLATE_PASSWORD + "\n"
    # What ansible is given as variables (rendered by ansible if they held templates) holds no
    # password: neither the extra variables nor the inventory.
    handed_over = json.dumps([playbook_variables(pairs), ansible_inventory(pairs)])
    assert "lookup(" not in handed_over and "secret-" not in handed_over
