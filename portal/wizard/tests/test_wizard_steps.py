"""The wizard, step by step, through the Django test client: each step checks its own fields,
nothing is saved before confirm, and confirm saves everything and starts the job."""

from __future__ import annotations

import json

import pytest

from portal.inventory import models
from portal.jobs.models import Job

pytestmark = pytest.mark.django_db


def _servers(prefix: str, hosts: tuple[str, str], first_octet: int) -> dict:
    data = {}
    for position, host in enumerate(hosts):
        octet = first_octet + position
        data.update(
            {
                f"{prefix}{position}-hostname": host,
                f"{prefix}{position}-nids": f"10.10.0.{octet}@o2ib",
                f"{prefix}{position}-bmc": f"10.20.0.{octet}",
                f"{prefix}{position}-bmc_user": "root",
                f"{prefix}{position}-bmc_password": f"secret-{host}",
                f"{prefix}{position}-pdu_outlet": f"pdu{position + 1}:{octet}",
            }
        )
    return data


def _servers_step(oss_hosts: tuple[str, str] = ("oss01", "oss02")) -> dict:
    """The servers step of a new filesystem: its MDS pair and MDT array, and the SSU's OSSs."""
    return {
        "mds-name": "mds01",
        "oss-name": "ssu01",
        "mdt-name": "mds01-a",
        "mdt-controller": "E2724",
        "mdt-drive_tb": "1.2",
        **_servers("mds", ("mds01", "mds02"), 1),
        **_servers("oss", oss_hosts, 11),
    }


ARRAYS = {
    "segment_kib": "128",
    "first_ost_index": "0",
    "arrays-TOTAL_FORMS": "2",
    "arrays-INITIAL_FORMS": "0",
    "arrays-MIN_NUM_FORMS": "1",
    "arrays-MAX_NUM_FORMS": "8",
    "arrays-0-name": "ssu01-a",
    "arrays-0-controller": "E5560",
    "arrays-0-expansion_model": "DE6600",
    "arrays-0-expansion_count": "1",
    "arrays-0-drive_tb": "4",
    "arrays-1-name": "ssu01-b",
    "arrays-1-controller": "E5560",
    "arrays-1-expansion_model": "DE6600",
    "arrays-1-expansion_count": "1",
    "arrays-1-drive_tb": "4",
    "action": "next",
}


@pytest.fixture
def operator(client, world):
    client.login(username="operator", password="pw-operator-123!")
    return client


def _new_filesystem_up_to_review(client, oss_hosts: tuple[str, str] = ("oss01", "oss02")) -> None:
    response = client.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    assert response.status_code == 302, response.content
    servers = _servers_step(oss_hosts)
    response = client.post("/ssus/add/servers/", servers)
    assert response.status_code == 302, _errors(response)
    response = client.post("/ssus/add/arrays/", ARRAYS)
    assert response.status_code == 302, _errors(response)
    assert response["Location"] == "/ssus/add/review/"


def _errors(response) -> str:
    return response.content.decode()[-3000:]


def test_a_viewer_may_not_open_the_wizard(client, world):
    client.login(username="viewer", password="pw-viewer-123!")
    assert client.get("/ssus/add/filesystem/").status_code == 403


def test_the_review_shows_the_plan_and_nothing_is_saved_yet(operator):
    _new_filesystem_up_to_review(operator)
    page = operator.get("/ssus/add/review/").content.decode()
    assert "scratch-OST0017" in page  # 24 OSTs: 0x00..0x17
    assert "scratch-MDT0000" in page
    # usable 712 TB of 2 x 120 x 4 TB drives, in binary units like every size: 647.6 TiB
    assert "647.6 TiB" in page or "647.5 TiB" in page
    assert "fence_ipmilan" in page or "ipmi" in page.lower()
    assert "drawer 5" in page
    assert not models.Filesystem.objects.exists()
    assert not Job.objects.exists()


def test_confirm_saves_both_pairs_and_starts_the_job(operator, django_capture_on_commit_callbacks):
    _new_filesystem_up_to_review(operator)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = operator.post("/ssus/add/review/")
    job = Job.objects.get()
    assert response["Location"] == f"/jobs/{job.pk}/"
    assert len(callbacks) == 1  # queued for a worker after commit
    assert [pair.name for pair in job.pairs.order_by("kind", "name")] == ["mds01", "ssu01"]
    assert [s.name for s in job.steps.all()] == [
        "preflight",
        "array",
        "lnet",
        "format",
        "mount",
        "corosync",
        "ha",
        "sensor",
        "verify",
        "accept",
    ]
    assert models.Target.objects.filter(kind="OST").count() == 24
    assert models.Server.objects.get(hostname="oss02").bmc_password == "secret-oss02"
    # The draft is gone: the wizard starts afresh.
    assert operator.get("/ssus/add/").headers["Location"] == "/ssus/add/filesystem/"


def test_a_bad_hostname_is_shown_next_to_its_field_and_nothing_moves_on(operator):
    operator.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    servers = _servers_step()
    servers["oss1-hostname"] = "OSS 02"
    response = operator.post("/ssus/add/servers/", servers)
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="id_oss1-hostname_errors"' in page
    assert "not a valid host name" in page


def test_the_same_host_in_the_mds_pair_and_the_ssu_is_refused(operator):
    operator.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    servers = _servers_step(oss_hosts=("mds02", "oss02"))
    page = operator.post("/ssus/add/servers/", servers).content.decode()
    assert "mds02 is already given for mds1" in page


def test_the_planner_s_complaint_about_an_array_appears_on_that_array(operator):
    _new_filesystem_up_to_review(operator)
    arrays = dict(ARRAYS, **{"arrays-1-global_spares": "3"})  # 117 drives: not 8+2-able
    response = operator.post("/ssus/add/arrays/", arrays)
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="id_arrays-1-global_spares_errors"' in page


def test_reload_and_back_keep_what_was_entered(operator):
    _new_filesystem_up_to_review(operator)
    page = operator.get("/ssus/add/servers/").content.decode()
    assert 'value="oss02"' in page
    assert "secret-oss02" not in page  # passwords are never sent back to the browser
    # Submitting the servers again without passwords keeps the stored ones.
    servers = _servers_step()
    for key in [k for k in servers if k.endswith("bmc_password")]:
        servers[key] = ""
    assert operator.post("/ssus/add/servers/", servers).status_code == 302
    assert operator.get("/ssus/add/review/").status_code == 200


def test_the_spec_downloads_and_uploads_as_the_planner_s_json(operator):
    _new_filesystem_up_to_review(operator)
    spec = json.loads(operator.get("/ssus/add/spec/oss.json").content)
    assert spec["ssu"] == "ssu01" and spec["role"] == "oss"
    assert [a["name"] for a in spec["arrays"]] == ["ssu01-a", "ssu01-b"]
    assert "bmc_password" not in json.dumps(spec)
    from provisioning.planner import make_plan

    assert len(make_plan(spec)["targets"]) == 24  # the planner command takes it as it is

    operator.post("/ssus/add/reset/")
    operator.post("/ssus/add/filesystem/", {"mode": "new", "new_name": "scratch"})
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("ssu01.json", json.dumps(spec).encode(), "application/json")
    response = operator.post("/ssus/add/upload/", {"spec": upload})
    assert response["Location"] == "/ssus/add/servers/"
    page = operator.get("/ssus/add/servers/").content.decode()
    assert 'value="oss01"' in page


def test_a_dotted_host_name_reaches_the_review_and_is_saved(
    operator, django_capture_on_commit_callbacks
):
    _new_filesystem_up_to_review(operator, oss_hosts=("oss01.lab", "oss02.lab"))
    response = operator.get("/ssus/add/review/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "oss01.lab" in page and "fence" in page.lower()
    with django_capture_on_commit_callbacks(execute=False):
        response = operator.post("/ssus/add/review/")
    assert response.status_code == 302, _errors(response)
    assert models.Server.objects.filter(hostname="oss02.lab").exists()


def _ssu02_servers(**changes: str) -> dict:
    """The servers step for a second SSU of scratch, oss03 and oss04."""
    data = {"oss-name": "ssu02", **_servers("oss", ("oss03", "oss04"), 13)}
    data.update(changes)
    return data


@pytest.fixture
def scratch_with_ssu01(operator):
    from portal.inventory.services import save_plans
    from portal.wizard.tests.conftest import load_spec

    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
    response = operator.post("/ssus/add/filesystem/", {"mode": "existing", "existing": "scratch"})
    assert response.status_code == 302, _errors(response)
    return operator


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("bmc", "10.20.0.11", "10.20.0.11 is already the BMC of oss01 in ssu01"),
        ("pdu_outlet", "pdu2:3", "pdu2:3 is already the PDU outlet of oss02 in ssu01"),
        ("nids", "10.10.0.12@o2ib", "NID 10.10.0.12@o2ib is already used by oss02"),
    ],
)
def test_a_bmc_outlet_or_nid_of_another_server_is_refused_at_its_field(
    scratch_with_ssu01, field, value, message
):
    response = scratch_with_ssu01.post(
        "/ssus/add/servers/", _ssu02_servers(**{f"oss1-{field}": value})
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert f'id="id_oss1-{field}_errors"' in page
    assert message in page
    assert not models.ServerPair.objects.filter(name="ssu02").exists()


def test_a_bmc_or_outlet_given_twice_in_the_draft_is_refused_at_the_second(scratch_with_ssu01):
    response = scratch_with_ssu01.post(
        "/ssus/add/servers/",
        _ssu02_servers(**{"oss1-bmc": "10.20.0.13", "oss1-pdu_outlet": "pdu1:13"}),
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert 'id="id_oss1-bmc_errors"' in page and 'id="id_oss1-pdu_outlet_errors"' in page
    assert "10.20.0.13 is already given as the BMC of oss03" in page
    assert "pdu1:13 is already given as the PDU outlet of oss03" in page


def _upload(client, spec: dict):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("spec.json", json.dumps(spec).encode(), "application/json")
    return client.post("/ssus/add/upload/", {"spec": upload}, follow=True)


def test_a_spec_with_7_drives_is_refused_with_the_planner_s_message(operator):
    from portal.wizard.tests.conftest import load_spec
    from provisioning.planner import SpecError, make_plan

    spec = load_spec("reference_ssu")
    spec["arrays"][0]["drives"] = 7
    with pytest.raises(SpecError) as planner:
        make_plan(spec)
    page = _upload(operator, spec).content.decode()
    assert planner.value.errors["arrays[0].drives"] in page
    assert "Spec not loaded: arrays[0].drives:" in page
    assert 'value="oss01"' not in operator.get("/ssus/add/servers/").content.decode()


def test_a_spec_field_the_wizard_cannot_carry_is_refused_by_name(operator):
    from portal.wizard.tests.conftest import load_spec

    spec = load_spec("reference_ssu")
    spec["servers"][0]["lnet_interface"] = "ib1"
    spec["raid"] = "8+2"  # the wizard's own value: used
    page = _upload(operator, spec).content.decode()
    assert "Spec not loaded: servers[0].lnet_interface: the wizard cannot carry it" in page
    del spec["servers"][0]["lnet_interface"]
    response = _upload(operator, spec)
    assert response.redirect_chain[0][0] == "/ssus/add/servers/"  # loaded
    assert "oss01" in json.dumps(operator.session["ssu_wizard"])
