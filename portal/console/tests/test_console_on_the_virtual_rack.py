"""The console's acts for real on a clustered virtual rack whose servers run the sensor agent:
Pacemaker (crm_simulate) decides where targets go, the playbooks run the real commands
(crm_resource, crm_attribute, lctl, SMcli) on the virtual servers, and the health API shows the
result. One rack for the whole sequence: crash, refused and accepted failback, an LNet link
down, a maintenance window, a tunable set for good through the MGS and reverted, a drive
replaced."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from portal.console.choices import Act, ReplacementState
from portal.console.models import AuditEntry, DriveReplacement, ImmutableError, Maintenance
from portal.console.services import (
    Author,
    ConfirmationNeeded,
    ConsoleError,
    Refused,
    cluster,
    drives,
    params,
)
from portal.health.tests.conftest import SENSOR_INTERVAL, virtual_rack_thresholds
from portal.health.tests.test_health_on_virtual_rack import wait_for
from portal.inventory.models import Drive, Filesystem, Server, StorageArray, Target
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.worker import run_job
from simulator import failures
from simulator.rack import Rack

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.rack(seconds=450)]

OSS01_OSTS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]
WITHIN = 10 * SENSOR_INTERVAL + 10


def run(job: Job) -> Job:
    run_job(job.pk)
    job.refresh_from_db()
    return job


def home(rack) -> bool:
    where = rack.placement()
    return all(where[label] == "oss01" for label in OSS01_OSTS)


@pytest.fixture
def rack(virtual_rack, metrics_db, settings, tmp_path, client, world):
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    settings.VIRTUAL_RACK = virtual_rack.root
    settings.ANSIBLE_WORK_DIR = tmp_path / "ansible"
    settings.OSTARA_DRIVE_POLL_SECONDS = 1
    with Rack.open(virtual_rack.root) as opened:
        opened.state["rebuild_seconds"] = 40
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool", scenario="idle")
    client.login(username="viewer", password="pw-viewer-123!")
    wait_for(client, {("filesystem", "scratch"): "green"}, 60)
    return virtual_rack


def test_failback_and_a_drive_replacement_on_a_virtual_rack(rack, client, world):
    operator = Author(world["operator"])
    oss01 = Server.objects.get(hostname="oss01")

    # An OSS crashes: Pacemaker fences it and its partner serves its targets (orange).
    rack.inject("server-crash", server="oss01")
    wait_for(client, {("target", "scratch-OST0000"): ("orange", "failover server oss02")}, WITHIN)
    assert {rack.placement()[label] for label in OSS01_OSTS} == {"oss02"}
    with pytest.raises(Refused) as refused:
        cluster.start(Act.FAILBACK, oss01, operator, confirmed=False)
    assert "oss01 is not online in its cluster" in refused.value.reasons
    refusal = AuditEntry.objects.get(act=Act.FAILBACK, job=None)  # in the log, with why
    assert refusal.details["refused"] == refused.value.reasons
    assert "refused: oss01 is not online in its cluster" in refusal.summary

    # Repaired: it rejoins, its targets stay on the partner until an operator fails it back.
    rack.clear_all()
    wait_for(client, {("server", "oss01"): ("orange", "ready for failback: all 12 of its")}, WITHIN)
    rack.wait_rounds(2)  # its sensor, stopped with it, reports again
    assert not home(rack)
    with pytest.raises(ConfirmationNeeded) as needed:
        cluster.start(Act.FAILBACK, oss01, operator, confirmed=False)
    lines = needed.value.proposal.lines
    assert "scratch-OST0000: oss02 → oss01" in lines and len(lines) == 12
    job = run(cluster.start(Act.FAILBACK, oss01, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.outcome == "12 targets home"
    assert home(rack)
    assert all(
        t.current_server_id == t.primary_server_id
        for t in Target.objects.filter(primary_server=oss01)
    )
    wait_for(client, {("filesystem", "scratch"): "green"}, WITHIN)
    entry = AuditEntry.objects.get(job=job)
    assert (entry.username, entry.act, entry.object_name) == ("operator", Act.FAILBACK, "oss01")
    assert "scratch-OST0000: oss02 → oss01" in entry.summary
    with pytest.raises(ImmutableError):
        entry.delete()

    # LNet down on oss01: Pacemaker moves its targets away; failback is refused and says why.
    rack.inject("lnet-down", server="oss01")
    wait_for(client, {("target", "scratch-OST0000"): "orange"}, WITHIN)
    with pytest.raises(Refused) as refused:
        cluster.start(Act.FAILBACK, oss01, operator, confirmed=False)
    assert any("LNet" in reason for reason in refused.value.reasons), refused.value.reasons
    rack.clear_all()
    wait_for(client, {("server", "oss01"): ("orange", "ready for failback: all 12 of its")}, WITHIN)
    rack.wait_rounds(2)  # its sensor, stopped with it, reports again
    assert run(cluster.start(Act.FAILBACK, oss01, operator, confirmed=True)).state == "succeeded"

    # Maintenance: oss01's targets go to oss02 and the node to standby; its alerts are
    # silenced for the window; ending it brings them home.
    job = run(
        cluster.start(
            Act.MAINTENANCE_START, oss01, operator, confirmed=True, hours=2, reason="BIOS update"
        )
    )
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.outcome == "12 targets on oss02; oss01 in standby"
    assert {rack.placement()[label] for label in OSS01_OSTS} == {"oss02"}
    window = Maintenance.objects.get(server=oss01, ended__isnull=True)
    assert window.silence.object_label == "oss01"
    assert [act.slug for act in cluster.available(oss01)] == ["maintenance-end"]
    with pytest.raises(Refused) as refused:
        cluster.start(Act.FAILBACK, oss01, operator, confirmed=False)
    assert any("maintenance" in reason for reason in refused.value.reasons)
    # Orange, not red: the dashboard says it is out on purpose, and until when.
    in_maintenance = {
        ("server", "oss01"): ("orange", "in maintenance until"),
        ("target", "scratch-OST0000"): ("orange", "while its primary oss01 is in maintenance"),
    }
    nodes = wait_for(client, in_maintenance, WITHIN)
    assert "BIOS update; 12 of its 12 targets run on its partner" in " ".join(
        nodes[("server", "oss01")]["reasons"]
    )
    job = run(cluster.start(Act.MAINTENANCE_END, oss01, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.outcome == "12 targets home; oss01 back in service"
    assert home(rack)
    window.refresh_from_db()
    assert window.ended is not None
    assert window.silence.ends <= timezone.now()
    wait_for(client, {("filesystem", "scratch"): "green"}, WITHIN)

    # A tunable set for good through the MGS reaches every server; the revert puts it back.
    scratch = Filesystem.objects.get(name="scratch")
    name = "osd-ldiskfs.*.read_cache_enable"
    # Read as the page and the API read it: a short job, kept while fresh.
    before = params.request_reading(scratch, name, operator)
    assert run(before.job).state == JobState.SUCCEEDED
    before.refresh_from_db()
    assert set(before.values) == {"mds01", "oss01", "oss02"}
    assert params.request_reading(scratch, name, operator).pk == before.pk
    with pytest.raises(ConsoleError) as bad:
        params.start_set(scratch, name, "0;reboot", operator, permanent=True)
    assert bad.value.field == "value" and "';'" in str(bad.value)
    job = run(params.start_set(scratch, name, "0", operator, permanent=True, confirmed=True))
    assert job.state == JobState.SUCCEEDED, job.error
    after = params.read(scratch, name)
    assert {v for found in after.values.values() for v in found.values()} == {"0"}
    assert after.matched == before.matched
    change = AuditEntry.objects.get(job=job)
    assert change.revertible
    job = run(params.start_revert(change, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, job.error
    assert params.read(scratch, name).values == before.values

    # A drive fails; the operator locates it, swaps it, the array reconstructs: optimal again.
    rack.inject("drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00", count=1)
    wait_for(client, {("target", "scratch-OST0000"): "orange"}, WITHIN)
    drive = Drive.objects.get(enclosure__array__name="ssu01-a", state="failed")
    address = drives.address_of(drive)
    job = run(drives.start_locate(drive, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, job.error
    replacement = DriveReplacement.objects.get(drive=drive)
    # Confirmed before the drive went in: the array still reports it failed.
    job = run(drives.start_replacement(drive, operator, confirmed=True))
    assert job.state == JobState.FAILED and "still reports drive" in job.error
    replacement.refresh_from_db()  # still located: confirm again once the drive is in
    assert replacement.state == ReplacementState.LOCATING
    assert "put the new drive in" in replacement.message
    with Rack.open(rack.root) as opened:
        failures.replace_drive(opened, "ssu01-a", address)
        opened.render()
    started = time.monotonic()
    job = run(drives.start_replacement(drive, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, job.error
    replacement.refresh_from_db()
    assert replacement.state == ReplacementState.DONE and replacement.progress == 100
    assert "reconstruction" in job.steps.get(name="watch").log
    assert time.monotonic() - started > 10  # it watched the array's progress
    wait_for(client, {("target", "scratch-OST0000"): "green"}, WITHIN)
    array = StorageArray.objects.get(name="ssu01-a")
    assert drives.drive_at(array, address).state == "assigned"
