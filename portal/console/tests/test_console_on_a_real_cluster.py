"""The product on a pair whose cluster is real (simulator.realcluster): the MDS pair is racked
with `simulator add --real-cluster`, so its servers run the real Corosync and Pacemaker in
namespaces of their own, with ipmi_sim BMCs that fence_ipmilan really powers off.

The provisioning job builds it from nothing, as the wizard starts it; the sensors it starts
feed the dashboard; a crash (the BMC powers mds01 off) is fenced by mds02, which runs its
targets, and the dashboard says so; the console's failback and maintenance run on the real
cluster, and each what-if the console shows before an act is what the real cluster then does.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from portal.console.choices import Act
from portal.console.services import Author, ConfirmationNeeded, Refused, cluster
from portal.health.tests.conftest import load_spec, virtual_rack_thresholds
from portal.health.tests.test_health_on_virtual_rack import wait_for
from portal.inventory.models import Server, ServerPair
from portal.inventory.provisioning import KIND
from portal.inventory.services import save_plans
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.services import create_job
from portal.jobs.worker import run_job
from portal.wizard.tests.conftest import on_host, simulator
from simulator import realcluster
from simulator.tests.test_real_cluster import ADDRESSES, NEEDS_REAL_CLUSTERS

pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db,
    NEEDS_REAL_CLUSTERS,
    pytest.mark.rack(seconds=410),
]
LINKS = ADDRESSES  # mds01 and mds02 on the rack's two link-local networks
INTERVAL = 2  # seconds between sensor rounds
WITHIN = 120
MOVE = re.compile(r"^(\S+): (\S+) → (\S+)$")


def placements(rack, host: str = "mds02") -> dict[str, str | None]:
    """Each target -> where the real cluster runs it, as crm_mon says on `host`."""
    status = on_host(rack, host, "crm_mon", "-1", "--output-as=xml").stdout
    found: dict[str, str | None] = {}
    for resource in ET.fromstring(status).iter("resource") if status.strip() else ():
        if resource.get("resource_agent") == "ocf:lustre:Lustre":
            node = resource.find("node")
            on = (
                node.get("name") if node is not None and resource.get("role") == "Started" else None
            )
            found[resource.get("id")] = on
    return found


def settle(rack, want: dict[str, str], seconds: float = 240) -> dict:
    deadline = time.monotonic() + seconds
    while (now := placements(rack)) != want:
        assert time.monotonic() < deadline, f"still {now}, not {want}"
        time.sleep(1)
    return now


def what_if(act: str, server: Server, operator: Author, **options) -> dict[str, str]:
    """The moves the console proposes before the act (target -> server), as shown."""
    with pytest.raises(ConfirmationNeeded) as needed:
        cluster.start(act, server, operator, confirmed=False, **options)
    moves = {}
    for line in needed.value.proposal.lines:
        if found := MOVE.match(line):
            moves[found[1]] = found[3]
    return moves


def run(job: Job) -> Job:
    run_job(job.pk)
    job.refresh_from_db()
    return job


def failed_output(job: Job) -> str:
    failed = job.steps.filter(state__in=["failed", "errored"]).first()
    return failed.output[-4000:] if failed else job.error


@pytest.fixture
def real_rack(tmp_path, settings, metrics_db):
    """The MDS pair racked with a real cluster, its BMCs answering and its servers on."""
    spec = load_spec("mds_pair")
    for server in spec["servers"]:
        server.update(LINKS[server["hostname"]])
    spec_file = tmp_path / "mds01.json"
    spec_file.write_text(json.dumps(spec))
    rack = tmp_path / "rack"
    settings.VIRTUAL_RACK = rack
    settings.ANSIBLE_WORK_DIR = tmp_path / "ansible"
    settings.OSTARA_SENSOR_INTERVAL = INTERVAL
    serve = None
    try:
        simulator("add", "--rack", str(rack), "--real-cluster", str(spec_file))
        log = open(tmp_path / "serve.log", "ab")  # noqa: SIM115
        serve = subprocess.Popen(
            [sys.executable, "-m", "simulator", "serve", "--rack", str(rack),
             "--interval", str(INTERVAL), "--scenario", "idle"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        yield rack, spec
    finally:
        from portal.conftest import stop_virtual_sensors

        if serve is not None:
            serve.terminate()
            serve.wait(timeout=30)
        if (rack / "rack.json").exists():  # powered off first: a server going down holds
            simulator("remove-real", "--rack", str(rack))  # its sensor, which then ends
        stop_virtual_sensors(rack)


def test_the_console_and_the_dashboard_on_a_real_cluster(real_rack, client, world):
    rack, spec = real_rack
    operator = Author(world["operator"])
    # The wizard's credentials: the BMC user fence_ipmilan logs in as, and its password.
    credentials = {
        host: (realcluster.bmc.USER, realcluster.bmc.password(rack, host)) for host in LINKS
    }
    save_plans([spec], credentials)
    started = time.monotonic()
    job = run(create_job(KIND, "Provision", pairs=ServerPair.objects.filter(name="mds01")))
    assert job.state == JobState.SUCCEEDED, failed_output(job)
    built_in = time.monotonic() - started
    # The real cluster runs the targets on their primary, over two heartbeat links.
    assert placements(rack) == {"MGS": "mds01", "scratch-MDT0000": "mds01"}
    links = on_host(rack, "mds01", "corosync-cfgtool", "-s").stdout
    assert "LINK ID 0" in links and "LINK ID 1" in links, links
    assert links.count("nodeid:          2:\tconnected") == 2, links

    virtual_rack_thresholds()
    client.login(username="viewer", password="pw-viewer-123!")
    healthy = {
        ("server", "mds01"): "green",
        ("server", "mds02"): "green",
        ("target", "scratch-MGS"): "green",
        ("target", "scratch-MDT0000"): "green",
    }
    wait_for(client, healthy, WITHIN)

    # A crash: mds01's BMC powers it off. The dashboard turns it red while it is down ...
    crashed = time.monotonic()
    power = realcluster.bmc.ipmitool(
        rack, "mds01", LINKS["mds01"]["bmc"], "chassis", "power", "off"
    )
    assert "Down/Off" in power.stdout, power.stderr
    wait_for(client, {("server", "mds01"): "red"}, WITHIN)
    # ... mds02 fences it through fence_ipmilan (a reboot: mds01 comes back and rejoins) and
    # runs its targets, which stay there: failing back is the operator's act.
    settle(rack, {"MGS": "mds02", "scratch-MDT0000": "mds02"})
    failover = time.monotonic() - crashed
    history = on_host(rack, "mds02", "stonith_admin", "--history", "mds01").stdout
    assert re.search(r"reboot of mds01 successful: delegate=mds02", history), history
    after_crash = {
        ("target", "scratch-MDT0000"): ("orange", "failover server mds02"),
        ("server", "mds01"): ("orange", "ready for failback"),
    }
    wait_for(client, after_crash, WITHIN)

    # Failback: the console's what-if is what the real cluster then does.
    mds01 = Server.objects.get(hostname="mds01")
    proposed = what_if(Act.FAILBACK, mds01, operator)
    assert proposed == {"MGS": "mds01", "scratch-MDT0000": "mds01"}
    job = run(cluster.start(Act.FAILBACK, mds01, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, failed_output(job)
    assert placements(rack) == proposed
    assert "cli-prefer" not in on_host(rack, "mds01", "cibadmin", "--query").stdout
    wait_for(client, healthy, WITHIN)

    # Maintenance: its targets to mds02 and mds01 in standby, as proposed; then home again.
    proposed = what_if(Act.MAINTENANCE_START, mds01, operator, hours=1, reason="firmware")
    assert proposed == {"MGS": "mds02", "scratch-MDT0000": "mds02"}
    job = run(
        cluster.start(
            Act.MAINTENANCE_START, mds01, operator, confirmed=True, hours=1, reason="firmware"
        )
    )
    assert job.state == JobState.SUCCEEDED, failed_output(job)
    assert placements(rack) == proposed
    nodes = on_host(rack, "mds02", "crm_mon", "-1", "--output-as=xml").stdout
    standby = {n.get("name"): n.get("standby") for n in ET.fromstring(nodes).find("nodes")}
    assert standby.get("mds01") == "true", standby
    with pytest.raises(Refused):
        cluster.start(Act.FAILBACK, mds01, operator, confirmed=False)
    wait_for(client, {("server", "mds01"): ("orange", "in maintenance until")}, WITHIN)
    proposed = what_if(Act.MAINTENANCE_END, mds01, operator)
    assert proposed == {"MGS": "mds01", "scratch-MDT0000": "mds01"}
    job = run(cluster.start(Act.MAINTENANCE_END, mds01, operator, confirmed=True))
    assert job.state == JobState.SUCCEEDED, failed_output(job)
    assert placements(rack) == proposed
    wait_for(client, healthy, WITHIN)
    print(json.dumps({"provision_s": round(built_in, 1), "failover_s": round(failover, 1)}))
