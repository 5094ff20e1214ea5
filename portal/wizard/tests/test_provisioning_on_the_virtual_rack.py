"""The provisioning job, run for real: ansible-runner with the project's playbooks against the
virtual rack's servers, arrays and Pacemaker. Slow (minutes), so one rack serves the checks."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
import uuid
import xml.etree.ElementTree as ET

import pytest
from django.conf import settings

from portal.inventory.choices import TargetState
from portal.inventory.models import Server, ServerPair, Target
from portal.inventory.provisioning import KIND, start_fencing_update
from portal.inventory.services import save_plans
from portal.jobs.choices import JobState, StepState
from portal.jobs.services import create_job, retry
from portal.jobs.worker import run_job
from portal.surveys.tests.outcomes import ACCEPTED
from portal.wizard.tests.conftest import BMC, load_spec, on_host, simulator
from sensors.config import load_config

pytestmark = [pytest.mark.django_db, pytest.mark.services, pytest.mark.rack(seconds=690)]
# The arrays' REST collector asks every array this often here (60 s on a real appliance).
ARRAY_INTERVAL = 5


@pytest.fixture(autouse=True)
def array_metrics(services, settings):
    """The collector asks every ARRAY_INTERVAL, into a fresh database of this test."""
    from portal import influxdb as influx

    settings.OSTARA_ARRAY_INTERVAL = ARRAY_INTERVAL
    settings.INFLUXDB_DATABASE = f"provisioning_{uuid.uuid4().hex[:10]}"
    influx.ensure_database()
    yield
    influx.client().drop_database(settings.INFLUXDB_DATABASE)


# The pair's BMC password: a template ansible would run if it were given one (issue 28).
TEMPLATE_PASSWORD = "{{ lookup('pipe','id') }}{% raw %}"


def _provision(pair_names: list[str]):
    pairs = ServerPair.objects.filter(name__in=pair_names)
    job = create_job(KIND, "Provision", pairs=pairs)
    run_job(job.pk)
    job.refresh_from_db()
    return job


def _array_rounds(array: str, interval: int) -> list[tuple[str, int]]:
    """(server, time in s) of each point of the array's controller A, once three are in (or
    after a few minutes: a machine running the suite beside a demo is slow)."""
    from portal import influxdb as influx

    query = (
        f"SELECT ok FROM array WHERE array = '{array}' AND component = 'controller' "
        "AND id = 'A' AND time > now() - 10m GROUP BY server"
    )
    deadline = time.monotonic() + 4 * interval + 180
    while True:
        (points,) = influx.query_tagged([query], epoch="s")
        if len(points) >= 3 or time.monotonic() > deadline:
            return [(point["server"], point["time"]) for point in points]
        time.sleep(1)


def _collector_said(rack) -> str:
    """The end of the arrays collector's log, for a failed check's message."""
    log = rack / "arrays-collector" / "collector.log"
    return log.read_text()[-3000:] if log.exists() else "(no collector log)"


def _failed_output(job) -> str:
    failed = job.steps.filter(state__in=["failed", "errored"]).first()
    return failed.output[-4000:] if failed else ""


def test_provisioning_resumes_a_failed_step_reruns_without_change_and_survives_an_oss_crash(
    virtual_rack, client, world
):
    credentials = {
        **BMC,
        "oss01": ("root", TEMPLATE_PASSWORD),
        "oss02": ("root", TEMPLATE_PASSWORD),
    }
    save_plans([load_spec("mds_pair"), load_spec("reference_ssu")], credentials)
    # oss02 is down when the job starts: the step that fails shows its output, nothing after
    # it runs, and retry resumes there once the server is back.
    simulator("inject", "--rack", str(virtual_rack), "server-crash", "--server", "oss02")
    job = _provision(["mds01", "ssu01"])
    assert job.state == JobState.FAILED
    failed = job.steps.get(state="failed")
    assert failed.name == "preflight"
    assert "oss02" in failed.output and "No route to host" in failed.output
    assert job.steps.get(name="array").state == StepState.PENDING

    simulator("clear", "--rack", str(virtual_rack), "--all")  # the server is back
    retry(job)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, _failed_output(job)
    assert job.steps.get(name="preflight").log.count("started (attempt") == 2
    assert job.steps.get(name="array").log.count("started (attempt") == 1
    # The job ends with the acceptance survey of the new SSU, judged against its plan.
    assert ACCEPTED.match(job.outcome), job.outcome
    assert "(expected 9.6 GiB/s)" in job.outcome  # the plan's 9,800 MiB/s
    (survey,) = job.surveys.all()
    assert survey.acceptance and survey.verdict == "pass" and len(survey.labels) == 24

    # Every target is mounted on its primary, and the inventory says so.
    mounts = {
        host: on_host(virtual_rack, host, "mount", "-t", "lustre").stdout
        for host in ("mds01", "mds02", "oss01", "oss02")
    }
    for target in Target.objects.select_related("primary_server"):
        assert f" on {target.mount_point} type lustre" in mounts[target.primary_server.hostname]
        assert target.state == TargetState.MOUNTED
        assert target.current_server_id == target.primary_server_id
    # The API says what the arrays and Pacemaker reported: groups optimal, targets at home.
    client.login(username="viewer", password="pw-viewer-123!")
    groups = client.get("/api/v1/volume-groups/?limit=1000").json()["results"]
    assert len(groups) == 25 and {g["state"] for g in groups} == {"optimal"}
    targets = client.get("/api/v1/targets/?limit=1000").json()["results"]
    assert {(t["state"], t["current_server"] == t["primary_server"]) for t in targets} == {
        ("mounted", True)
    }
    dl = on_host(virtual_rack, "oss02", "lctl", "dl").stdout
    assert "obdfilter scratch-OST0001" in dl
    # Corosync under the cluster: the file pcs would write and one authkey for the pair, the
    # appliance's own, on both servers.
    key = settings.RUN_DIR / "corosync" / "corosync-authkey-ssu01"
    for host in ("oss01", "oss02"):
        etc = virtual_rack / "hosts" / host / "etc" / "corosync"
        assert "cluster_name: scratch-ssu01-oss\n" in (etc / "corosync.conf").read_text()
        assert (etc / "authkey").read_bytes() == key.read_bytes()
        assert on_host(virtual_rack, host, "systemctl", "is-active", "pacemaker").returncode == 0
    # The fence secrets are on the servers, readable by root only, and not in the CIB.
    # The SSU's password is a template: it arrives byte for byte (and a newline), unrendered.
    secret = virtual_rack / "hosts" / "oss01" / "etc" / "ostara" / "fence" / "bmc-oss02"
    assert secret.read_bytes() == (TEMPLATE_PASSWORD + "\n").encode()
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    mds_secret = virtual_rack / "hosts" / "mds02" / "etc" / "ostara" / "fence" / "bmc-mds01"
    assert mds_secret.read_text() == "secret-mds01\n"
    # The helper the fence devices call hands the fence agent exactly that password.
    installed = virtual_rack / "hosts" / "oss01" / "usr" / "libexec" / "ostara" / "fence-secret"
    helper = subprocess.run(
        [str(installed), "bmc-oss02"],
        env={**os.environ, "OSTARA_FENCE_SECRET_DIR": str(secret.parent)},
        capture_output=True,
        text=True,
    )
    assert helper.stdout == TEMPLATE_PASSWORD + "\n", helper.stderr
    cib = on_host(virtual_rack, "oss01", "cibadmin", "--query").stdout
    assert TEMPLATE_PASSWORD not in cib and 'id="scratch-OST0017"' in cib
    # oss01's sensor polls oss02's PDU outlet with the CIB device's own agent and options.
    pdu_status = _pdu_command(virtual_rack, "oss01")
    assert "fence_apc_snmp --ip=pdu2 --plug=3 " in pdu_status
    answer = subprocess.run(shlex.split(pdu_status), capture_output=True, text=True)
    assert (answer.returncode, answer.stdout) == (0, "Status: ON\n"), answer.stderr

    # The arrays are watched from the management server through their REST API, each
    # controller's certificate pinned, each array's password in its own 0600 file; the servers'
    # sensors no longer read them (issue 33). Each array's points are written once per
    # interval, under the management server's name alone.
    collector = (virtual_rack / "arrays-collector" / "collector.conf").read_text()
    pinned = json.loads((virtual_rack / "rack.json").read_text())["arrays"]["ssu01-a"]
    a, b = (pinned["management"]["controllers"][c]["sha256"] for c in "AB")
    assert f"fingerprints = {a} {b}\n" in collector and a != b
    password = virtual_rack / "arrays-collector" / "ssu01-a.password"
    assert (
        password.read_text() == (virtual_rack / pinned["management"]["password_file"]).read_text()
    )
    assert password.stat().st_mode & 0o777 == 0o600
    for host in ("mds01", "oss01"):
        config = load_config(virtual_rack / "hosts" / host / "etc" / "ostara" / "sensor.conf")
        assert not {"array", "santricity"} & set(config.collectors) and not config.array_smcli
    # The sensors and the collector run in sessions of their own, as their units would: the
    # SIGTERM ansible sends to the process group of a worker still running at the play's end
    # does not reach them (it stopped them, now and then, on a busy machine).
    started = [*virtual_rack.glob("hosts/*/run/ostara-sensor.pid")]
    for pid_file in [*started, virtual_rack / "arrays-collector" / "collector.pid"]:
        pid = int(pid_file.read_text())
        assert os.getsid(pid) == pid, pid_file
    assert len(started) == 4
    rounds = _array_rounds("ssu01-a", ARRAY_INTERVAL)
    said = _collector_said(virtual_rack)
    assert {server for server, _ in rounds} == {settings.OSTARA_ARRAYS_SERVER}, (rounds, said)
    # Never two points in one interval (a round the machine was too busy for may be skipped).
    times = sorted(time for _, time in rounds)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gaps and all(g > 0 and g % ARRAY_INTERVAL == 0 for g in gaps), (times, said)

    # Running the finished job again changes nothing on the hosts.
    retry(job)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, _failed_output(job)
    # (The acceptance survey measures again: it writes its own objects by design.)
    for step in job.steps.exclude(name="accept"):
        assert ", 0 change(s)" in step.log, f"{step.name} changed something:\n{step.log}"
    assert ACCEPTED.match(job.outcome), job.outcome

    # oss02 moves to another PDU outlet (as the Django admin saves it): the job that applies
    # fence devices pushes the new CIB to the running cluster, and runs nothing else.
    Server.objects.filter(hostname="oss02").update(pdu_outlet="pdu2:20")
    fencing = start_fencing_update(ServerPair.objects.get(name="ssu01"))
    run_job(fencing.pk)
    fencing.refresh_from_db()
    assert fencing.state == JobState.SUCCEEDED, _failed_output(fencing)
    assert [step.name for step in fencing.steps.order_by("position")] == ["ha", "sensor", "verify"]
    cib = ET.fromstring(on_host(virtual_rack, "oss01", "cibadmin", "--query").stdout)
    plug = cib.find(".//primitive[@id='fence-oss02-pdu']/instance_attributes/nvpair[@name='plug']")
    assert plug.get("value") == "20"
    assert "--ip=pdu2 --plug=20 " in _pdu_command(virtual_rack, "oss01")

    # An OSS crashes: its partner fences it and mounts all of its OSTs.
    simulator("inject", "--rack", str(virtual_rack), "server-crash", "--server", "oss01")
    status = simulator("status", "--rack", str(virtual_rack), "--json")
    rack = json.loads(status)
    oss02_mounts = on_host(virtual_rack, "oss02", "mount", "-t", "lustre").stdout
    for index in range(24):
        assert f"/mnt/lustre/scratch-OST{index:04x} type lustre" in oss02_mounts
    assert _was_fenced(rack, "oss01"), status[:2000]


def _pdu_command(rack, host: str) -> str:
    config = (rack / "hosts" / host / "etc" / "ostara" / "sensor.conf").read_text()
    return next(
        line.split("=", 1)[1].strip()
        for line in config.splitlines()
        if line.startswith("pdu_command")
    )


def _was_fenced(rack: dict, host: str) -> bool:
    return host in json.dumps(rack["fence_history"]) and rack["servers"][host]["state"] != "up"
