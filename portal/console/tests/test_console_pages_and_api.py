"""The console's roles and refusals, without a rack: viewers see no act and get 403; bad names
and values are refused with the field named before anything runs; the audit log cannot be
changed through the API, the admin or the models."""

from __future__ import annotations

import pytest

from portal.console.choices import KIND_FAILBACK, Act, ObjectKind, ReplacementState, Via
from portal.console.models import AuditEntry, DriveReplacement, ImmutableError
from portal.console.services import Author, ConsoleError, drives
from portal.inventory.choices import DriveState
from portal.inventory.models import Drive, Target
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.services import create_job

pytestmark = pytest.mark.django_db


def login(client, role: str) -> None:
    assert client.login(username=role, password=f"pw-{role}-123!")


def test_a_viewer_sees_no_act_and_is_refused(client, world, rack_inventory):
    login(client, "viewer")
    page = client.get("/health/servers/oss01/").content.decode()
    assert "data-act=" not in page
    assert client.get("/health/targets/scratch-OST0000/").status_code == 200
    assert client.get("/console/servers/oss01/failback/").status_code == 403
    for url, body in (
        ("/api/v1/console/failback/", {"server": "oss01"}),
        ("/api/v1/console/failover/", {"target": "scratch-OST0000"}),
        ("/api/v1/console/maintenance/", {"server": "oss01", "on": True}),
        ("/api/v1/console/set-param/", {"filesystem": "scratch", "name": "a.b", "value": "1"}),
        ("/api/v1/console/drive/", {"array": "ssu01-a", "drive": "0,1,1", "step": "locate"}),
    ):
        assert client.post(url, body, content_type="application/json").status_code == 403, url
    assert client.get("/console/audit/").status_code == 200
    assert client.get("/api/v1/audit/").status_code == 200


def test_an_operator_sees_the_acts_that_apply(client, world, rack_inventory):
    login(client, "operator")
    target = client.get("/health/targets/scratch-OST0000/").content.decode()
    # Home on its primary: it can fail over, and there is nothing to fail back.
    assert 'data-act="failover"' in target and 'data-act="failback"' not in target
    server = client.get("/health/servers/oss01/").content.decode()
    assert 'data-act="failover"' in server and 'data-act="maintenance-start"' in server
    assert 'data-act="failback"' not in server
    assert "/console/arrays/ssu01-a/" in client.get("/ssus/ssu01/").content.decode()
    array = client.get("/console/arrays/ssu01-a/")
    assert array.status_code == 200 and array.content.decode().count('class="drive ') >= 120


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"name": "osc.*.max_rpcs_in_flight", "value": "16;reboot"}, "value", "';'"),
        ({"name": "osc.*.max_rpcs_in_flight", "value": "$(id)"}, "value", "'$'"),
        ({"name": "osc.*;rm -rf /", "value": "16"}, "name", "not a parameter name"),
        ({"name": "max_rpcs_in_flight", "value": "16"}, "name", "not a parameter name"),
        ({"name": "osc.*.max_rpcs_in_flight", "value": "16"}, "servers", "choose the servers"),
        (
            {"name": "osc.*.max_rpcs_in_flight", "value": "16", "servers": ["oss09"]},
            "servers",
            "oss09: not a server of scratch",
        ),
    ],
)
def test_a_bad_parameter_change_is_refused_with_the_field(
    client, world, rack_inventory, body, field, words
):
    login(client, "operator")
    response = client.post(
        "/api/v1/console/set-param/",
        {"filesystem": "scratch", **body},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert words in response.json()[field][0]
    assert not AuditEntry.objects.exists()


def test_bad_cluster_requests_are_refused_with_the_field(client, world, rack_inventory):
    login(client, "operator")
    both = client.post(
        "/api/v1/console/failover/",
        {"server": "oss01", "target": "scratch-OST0000"},
        content_type="application/json",
    )
    assert both.status_code == 400 and "server" in both.json()
    unknown = client.post(
        "/api/v1/console/failback/", {"server": "oss09"}, content_type="application/json"
    )
    assert unknown.status_code == 400 and "no server named 'oss09'" in unknown.json()["server"][0]
    lifetime = client.post(
        "/api/v1/console/failover/",
        {"server": "oss01", "lifetime": "1 hour"},
        content_type="application/json",
    )
    assert lifetime.status_code == 400 and "ISO 8601" in lifetime.json()["lifetime"][0]
    short = client.post(
        "/api/v1/console/maintenance/",
        {"server": "oss01", "on": True, "hours": 1},
        content_type="application/json",
    )
    assert short.status_code == 400 and "say why" in short.json()["reason"][0]


def test_a_refused_act_is_in_the_audit_log_with_its_reasons(client, world, rack_inventory):
    pair = Target.objects.get(label="scratch-OST0000").primary_server.pair
    busy = create_job(KIND_FAILBACK, "Failback of oss02", pairs=[pair])
    Job.objects.filter(pk=busy.pk).update(state=JobState.RUNNING)
    login(client, "operator")
    # The page answers at once and works the act out in place (it reads the live cluster).
    page = client.get("/console/servers/oss01/failback/").content.decode()
    assert 'id="what-if-pending"' in page and 'hx-get="/console/servers/oss01/failback/"' in page
    assert "Reading the cluster of ssu01" in page and not AuditEntry.objects.exists()
    answer = client.get("/console/servers/oss01/failback/", HTTP_HX_REQUEST="true")
    assert answer.status_code == 200  # htmx swaps a 2xx answer in
    reason = (
        f"job #{busy.pk} (Failback of oss02) is still running on ssu01: wait for it or cancel it"
    )
    assert reason in answer.content.decode() and 'id="act-refused"' in answer.content.decode()
    assert client.post("/console/servers/oss01/failback/").status_code == 409
    entry = AuditEntry.objects.filter(act=Act.FAILBACK).last()  # the first of the two
    assert (entry.username, entry.act, entry.object_name, entry.job) == (
        "operator",
        Act.FAILBACK,
        "oss01",
        None,
    )
    assert entry.summary == f"Failback of oss01 refused\nrefused: {reason}"
    login(client, "admin")
    log = client.get("/console/audit/?act=failback").content.decode()
    assert "Failback of oss01 refused" in log and f"Refused: {reason}" in log
    api = client.get("/api/v1/audit/?act=failback").json()["results"]
    assert [row["object_name"] for row in api] == ["oss01", "oss01"]


def test_the_audit_log_cannot_be_changed(client, world):
    job = create_job(KIND_FAILBACK, "Failback of oss01")
    entry = AuditEntry.objects.create(
        job=job,
        username="operator",
        via=Via.API,
        act=Act.FAILBACK,
        object_kind=ObjectKind.SERVER,
        object_name="oss01",
        summary="Failback of oss01",
    )
    login(client, "admin")
    url = f"/api/v1/audit/{entry.pk}/"
    assert client.get(url).json()["object_name"] == "oss01"
    assert client.delete(url).status_code == 405
    assert client.patch(url, {"summary": "x"}, content_type="application/json").status_code == 405
    assert client.get(f"/admin/console/auditentry/{entry.pk}/delete/").status_code == 403
    with pytest.raises(ImmutableError):
        entry.delete()
    entry.summary = "rewritten"
    with pytest.raises(ImmutableError):
        entry.save()
    with pytest.raises(ImmutableError):
        AuditEntry.objects.filter(pk=entry.pk).update(summary="rewritten")
    with pytest.raises(ImmutableError):
        AuditEntry.objects.all().delete()
    found = client.get("/api/v1/audit/?user=operator&act=failback").json()
    assert [row["id"] for row in found["results"]] == [entry.pk]
    assert client.get("/api/v1/audit/?since=yesterday").status_code == 400
    page = client.get("/console/audit/?object=oss01").content.decode()
    assert "Failback of oss01" in page
    assert f'href="/jobs/{job.pk}/"' in page  # its job, one click away


def test_a_drive_replacement_offers_one_step_at_a_time_and_starts_anew_once_stopped(
    client, world, rack_inventory, django_capture_on_commit_callbacks
):
    drive = Drive.objects.filter(enclosure__array__name="ssu01-a", volume_group__isnull=False)[0]
    Drive.objects.filter(pk=drive.pk).update(state=DriveState.FAILED)
    drive.refresh_from_db()
    operator = Author(world["operator"])
    assert drives.offers(drive, None) == {"locate": True, "replaced": False}
    with django_capture_on_commit_callbacks():  # not handed to a worker: nothing runs
        job = drives.start_locate(drive, operator, confirmed=True)
    replacement = drives.open_replacement(drive)
    assert replacement.state == ReplacementState.IDENTIFYING and replacement.job == job
    # Its job is pending: no second one, and no button for one.
    assert drives.offers(drive, replacement) == {"locate": False, "replaced": False}
    with pytest.raises(ConsoleError, match="still pending"):
        drives.start_locate(drive, operator, confirmed=True)
    login(client, "operator")
    url = f"/console/arrays/ssu01-a/drives/{drives.address_of(drive)}/"
    page = client.get(url).content.decode()
    assert "Switching the locate LED" in page and 'id="locate-drive"' not in page
    # The LED is on: the next step is offered; a failure after the reconstruction started
    # ends this replacement, and the drive, still failed, gets a new one.
    Job.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED)
    DriveReplacement.objects.filter(pk=replacement.pk).update(state=ReplacementState.LOCATING)
    replacement.refresh_from_db()
    assert drives.offers(drive, replacement) == {"locate": True, "replaced": True}
    assert 'id="drive-replaced"' in client.get(url).content.decode()
    DriveReplacement.objects.filter(pk=replacement.pk).update(state=ReplacementState.RECONSTRUCTING)
    replacement.refresh_from_db()
    drives.stopped(replacement, "cancelled while the array reconstructs")
    assert replacement.state == ReplacementState.FAILED and replacement.finished is not None
    assert drives.open_replacement(drive) is None
    assert drives.offers(drive, replacement)["locate"]
    with django_capture_on_commit_callbacks():
        drives.start_locate(drive, operator, confirmed=True)
    assert drives.open_replacement(drive).pk != replacement.pk


def test_a_drive_replacement_job_marks_its_array_and_the_target_that_rebuilds(
    world, rack_inventory, django_capture_on_commit_callbacks
):
    drive = Drive.objects.filter(enclosure__array__name="ssu01-a", volume_group__isnull=False)[0]
    Drive.objects.filter(pk=drive.pk).update(state=DriveState.FAILED)
    drive.refresh_from_db()
    operator = Author(world["operator"])
    with django_capture_on_commit_callbacks():
        locate = drives.start_locate(drive, operator, confirmed=True)
    assert locate.marks == {}  # blinking a LED moves nothing
    Job.objects.filter(pk=locate.pk).update(state=JobState.SUCCEEDED)
    DriveReplacement.objects.filter(job=locate).update(state=ReplacementState.LOCATING)
    with django_capture_on_commit_callbacks():
        job = drives.start_replacement(drive, operator, confirmed=True)
    (target,) = Target.objects.filter(volume_group=drive.volume_group)
    # Health shows them "moving (job N)" while it swaps and starts the reconstruction, not
    # while it follows the reconstruction (a second drive lost then is an alarm).
    assert job.marks == {
        f"storagearray:{drive.enclosure.array.pk}": "moves",
        f"target:{target.pk}": "moves",
    }
