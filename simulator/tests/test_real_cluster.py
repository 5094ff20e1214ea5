"""A virtual MDS pair whose cluster is real: Corosync with two knet links, Pacemaker, ipmi_sim
BMCs and fence_ipmilan, in namespaces this test creates (link-local addresses only).

Proves what the imitation only claims: the pair forms a cluster from nothing, Pacemaker starts
the targets through the Lustre agent (mounted in the rack, as the sensors see them), and a
server that crashes (its BMC powers it off) is fenced by its partner through fence_ipmilan and
its targets run on the partner.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from provisioning.ha import build_cib
from provisioning.planner import make_plan
from simulator import provision, realcluster
from simulator.rack import Rack

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(realcluster.missing_tools()),
    reason="needs root and corosync, pacemaker, fence-agents, openipmi, ipmitool",
)

ADDRESSES = {
    "mds01": {"mgmt_address": "169.254.1.1", "heartbeat_address": "169.254.2.1",
              "bmc": "169.254.1.101"},
    "mds02": {"mgmt_address": "169.254.1.2", "heartbeat_address": "169.254.2.2",
              "bmc": "169.254.1.102"},
}  # fmt: skip
SPEC = {
    "filesystem": "scratch", "ssu": "mds01", "role": "mds", "raid": "10", "segment_kib": 128,
    "first_mdt_index": 0,
    "servers": [
        {"hostname": "mds01", "nids": ["10.10.0.1@o2ib"], "bmc": "169.254.1.101",
         "pdu_outlet": "pdu1:1"},
        {"hostname": "mds02", "nids": ["10.10.0.2@o2ib"], "bmc": "169.254.1.102",
         "pdu_outlet": "pdu2:1"},
    ],
    "arrays": [{"name": "mds01-a", "controller": "E2724", "drive_tb": 1.2}],
}  # fmt: skip
COROSYNC_CONF = """totem {
    version: 2
    cluster_name: mds01
    transport: knet
    crypto_cipher: aes256
    crypto_hash: sha256
}
nodelist {
    node {
        ring0_addr: 169.254.1.1
        ring1_addr: 169.254.2.1
        name: mds01
        nodeid: 1
    }
    node {
        ring0_addr: 169.254.1.2
        ring1_addr: 169.254.2.2
        name: mds02
        nodeid: 2
    }
}
quorum {
    provider: corosync_votequorum
    two_node: 1
}
logging {
    to_logfile: yes
    logfile: /var/log/cluster/corosync.log
    to_syslog: no
    timestamp: on
}
"""
REPO = Path(__file__).resolve().parents[2]


def _on(rack_root: Path, host: str, *argv: str, check: bool = True) -> str:
    tool = rack_root / "hosts" / host / "bin" / argv[0]
    done = subprocess.run([str(tool), *argv[1:]], capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} on {host}: {done.returncode} {done.stderr}")
    return done.stdout


def _wait(what: str, condition, timeout: float = 120.0, every: float = 1.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


def _placements(rack_root: Path, host: str) -> dict[str, str | None]:
    """Each Lustre target -> the server crm_mon says it runs on (None: stopped)."""
    status = _on(rack_root, host, "crm_mon", "-1", "--output-as=xml", check=False)
    if not status.strip():
        return {}
    found = {}
    for resource in ET.fromstring(status).iter("resource"):
        if resource.get("resource_agent") == "ocf:lustre:Lustre":
            node = resource.find("node")
            started = resource.get("role") == "Started" and node is not None
            found[resource.get("id")] = node.get("name") if started else None
    return found


@pytest.fixture(scope="module")
def real_pair(tmp_path_factory):
    rack_root = tmp_path_factory.mktemp("real-rack") / "rack"
    plan = make_plan(SPEC)
    for server in plan["servers"]:
        server.update(ADDRESSES[server["hostname"]])
    with Rack.open(rack_root, create=True) as rack:
        rack.add(plan)
        realcluster.mark_real(rack.state, "mds01")
        rack.install_commands()
        provision.build(rack, plan, mount=False)
    key = os.urandom(256)
    for host in ADDRESSES:
        root = rack_root / "hosts" / host
        (root / "etc/corosync").mkdir(parents=True, exist_ok=True)
        (root / "etc/corosync/corosync.conf").write_text(COROSYNC_CONF)
        (root / "etc/corosync/authkey").write_bytes(key)
        os.chmod(root / "etc/corosync/authkey", 0o400)
        (root / "usr/libexec/ostara").mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "provisioning/ha/fence-secret", root / "usr/libexec/ostara/fence-secret")
        (root / "etc/ostara/fence").mkdir(parents=True, exist_ok=True)
        os.chmod(root / "etc/ostara/fence", 0o700)
    for host in ADDRESSES:
        for secret_host in ADDRESSES:
            path = rack_root / "hosts" / host / "etc/ostara/fence" / f"bmc-{secret_host}"
            path.write_text(realcluster.bmc.password(rack_root, secret_host) + "\n")
            os.chmod(path, 0o600)
    started = time.monotonic()
    try:
        with Rack.open(rack_root) as rack:
            realcluster.start(rack.root, rack.state)
        for host in ADDRESSES:  # LNet up, as lnet.yml leaves it: healthLNET pings the NIDs
            _wait(f"{host} powered on", lambda h=host: realcluster.node.init_pid(rack_root, h))
            _on(rack_root, host, "lnetctl", "lnet", "configure")
            _on(rack_root, host, "lnetctl", "net", "add", "--net", "o2ib", "--if", "ib0",
                check=False)  # fmt: skip
        yield {"root": rack_root, "plan": plan, "started": started}
    finally:
        with Rack.open(rack_root) as rack:
            realcluster.stop(rack.root, rack.state)


def test_a_pair_forms_a_real_cluster_and_fences_a_crashed_server(real_pair):
    root, plan = real_pair["root"], real_pair["plan"]
    for host in ADDRESSES:
        assert _on(root, host, "systemctl", "is-enabled", "pacemaker", check=False) == "disabled\n"
        _on(root, host, "systemctl", "enable", "--now", "corosync", "pacemaker")
        assert _on(root, host, "systemctl", "is-active", "pacemaker") == "active\n"
    links = _wait(
        "both knet links connected",
        lambda: (
            (out := _on(root, "mds01", "corosync-cfgtool", "-s", check=False)).count("connected")
            >= 2
            and out
        ),
    )
    assert "LINK ID 0" in links and "LINK ID 1" in links
    _wait("both nodes online", lambda: "Online: [ mds01 mds02 ]" in _on(
        root, "mds01", "crm_mon", "-1", check=False))  # fmt: skip
    cib = root / "mds01.cib.xml"
    cib.write_text(build_cib(plan).replace('epoch="1"', 'epoch="100"', 1))
    _on(root, "mds01", "cibadmin", "--replace", "--xml-file", str(cib))
    placements = _wait(
        "the targets started on their primary",
        lambda: (p := _placements(root, "mds01")) and all(p.values()) and p,
        timeout=180,
    )
    assert placements == {"MGS": "mds01", "scratch-MDT0000": "mds01"}
    with Rack.open(root, read_only=True) as rack:  # the agent mounted them in the rack
        assert rack.state["targets"]["MGS"]["mounted_on"] == "mds01"

    # The crash: mds01's BMC powers it off. mds02 fences it (fence_ipmilan) and runs its targets.
    crashed = time.monotonic()
    done = realcluster.bmc.ipmitool(root, "mds01", "169.254.1.101", "chassis", "power", "off")
    assert "Down/Off" in done.stdout, done.stderr
    moved = _wait(
        "the targets on mds02",
        lambda: (p := _placements(root, "mds02")) and set(p.values()) == {"mds02"} and p,
        timeout=240,
    )
    assert moved == {"MGS": "mds02", "scratch-MDT0000": "mds02"}
    history = _on(root, "mds02", "stonith_admin", "--history", "mds01")
    assert "reboot" in history or "off" in history, history
    with Rack.open(root, read_only=True) as rack:
        assert rack.state["targets"]["MGS"]["mounted_on"] == "mds02"
    print(json.dumps({"failover_seconds": round(time.monotonic() - crashed, 1)}))
