"""corosync.yml on the virtual rack's MDS pair: the files pcs would write, the services enabled
and started, both nodes online under a DC; a second run changes nothing; a server of another
cluster is refused before anything is written on either server."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.specs import mds_spec
from provisioning.ha.corosync import build_corosync_conf, playbook_cluster
from provisioning.planner import make_plan
from provisioning.runner import run_playbook
from simulator import provision
from simulator.rack import Rack

pytestmark = pytest.mark.rack(seconds=150)

AUTHKEY = bytes(range(256))
LINKS = {"mds01": ("169.254.1.1", "169.254.2.1"), "mds02": ("169.254.1.2", "169.254.2.2")}


@pytest.fixture
def plan() -> dict:
    spec = mds_spec()
    for server in spec["servers"]:
        mgmt, heartbeat = LINKS[server["hostname"]]
        server.update(mgmt_address=mgmt, heartbeat_address=heartbeat)
    return make_plan(spec)


@pytest.fixture
def rack(tmp_path, plan) -> Path:
    root = tmp_path / "rack"
    with Rack.open(root, create=True) as opened:
        provision.build(opened, plan)
    return root


def inventory(rack: Path, plan: dict) -> dict:
    """The virtual rack's inventory, as portal.inventory.services.ansible_inventory makes it."""
    hosts = {}
    for server in plan["servers"]:
        root = rack / "hosts" / server["hostname"]
        hosts[server["hostname"]] = {
            "ostara_pair": plan["ssu"],
            "ostara_pair_group": f"pair_{plan['ssu']}",
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "ostara_root": str(root),
            "ostara_env": {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}"},
        }
    return {
        "all": {
            "hosts": hosts,
            "children": {
                "mds": {"hosts": {name: {} for name in hosts}},
                f"pair_{plan['ssu']}": {"hosts": {name: {} for name in hosts}},
            },
        }
    }


def run(rack: Path, plan: dict, tmp_path: Path, output: list[str] | None = None):
    variables = {"ostara_corosync": {plan["ssu"]: playbook_cluster(plan)}}
    lines = output if output is not None else []
    return run_playbook(
        "corosync.yml",
        inventory(rack, plan),
        variables,
        work_dir=tmp_path / "ansible",
        on_output=lines.append,
        secrets={f"corosync-authkey-{plan['ssu']}": AUTHKEY},
    )


def on(rack: Path, host: str, *command: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{rack / 'hosts' / host / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_the_pair_gets_its_cluster_and_a_second_run_changes_nothing(rack, plan, tmp_path):
    first = run(rack, plan, tmp_path)
    assert first.succeeded, first.summary()

    for host in ("mds01", "mds02"):
        etc = rack / "hosts" / host / "etc" / "corosync"
        assert (etc / "corosync.conf").read_text() == build_corosync_conf(plan)
        assert stat.S_IMODE((etc / "corosync.conf").stat().st_mode) == 0o644
        assert (etc / "authkey").read_bytes() == AUTHKEY
        assert stat.S_IMODE((etc / "authkey").stat().st_mode) == 0o400
        enabled = on(rack, host, "systemctl", "is-enabled", "corosync.service", "pacemaker.service")
        assert enabled.stdout.split() == ["enabled", "enabled"]
        assert on(rack, host, "systemctl", "is-active", "pacemaker.service").stdout == "active\n"

    # Both links, as Corosync 3.1 prints them, from the written file.
    links = on(rack, "mds02", "corosync-cfgtool", "-s").stdout
    assert "Local node ID 2, transport knet\nLINK ID 0 udp\n\taddr\t= 169.254.1.2\n" in links
    assert "LINK ID 1 udp\n\taddr\t= 169.254.2.2\n" in links
    assert links.count("nodeid:          1:\tconnected") == 2

    # Both nodes online under a DC, as on a real cluster before any resource exists.
    status = on(rack, "mds01", "crm_mon", "-1", "--output-as=xml").stdout
    assert '<current_dc present="true"' in status
    for host in ("mds01", "mds02"):
        assert f'<node name="{host}" id="{1 + (host == "mds02")}" online="true"' in status

    second = run(rack, plan, tmp_path)
    assert second.succeeded, second.summary()
    assert second.changed_total == 0, second.changed

    # A new heartbeat address reaches the running cluster as pcs sends it: a reload.
    plan["servers"][1]["heartbeat_address"] = "169.254.2.22"
    output: list[str] = []
    third = run(rack, plan, tmp_path, output)
    assert third.succeeded, third.summary()
    said = "\n".join(output)
    reload = said[said.index("TASK [Reload a running cluster's changed") :]
    assert reload.split("TASK [")[1].count("changed: [mds0") == 2, reload[:800]
    assert "addr\t= 169.254.2.22" in on(rack, "mds02", "corosync-cfgtool", "-s").stdout


def test_a_server_of_another_cluster_is_refused_and_its_partner_left_alone(rack, plan, tmp_path):
    other = rack / "hosts" / "mds02" / "etc" / "corosync"
    other.mkdir(parents=True)
    (other / "corosync.conf").write_text(
        "totem {\n    cluster_name: other\n}\nnodelist {\n"
        "    node {\n        ring0_addr: a\n        name: a\n        nodeid: 1\n    }\n"
        "    node {\n        ring0_addr: mds02\n        name: mds02\n        nodeid: 2\n    }\n}\n"
    )
    output: list[str] = []
    result = run(rack, plan, tmp_path, output)

    assert not result.succeeded
    assert (
        "mds02 already belongs to the cluster 'other' (/etc/corosync/corosync.conf lists nodes "
        "a, mds02); remove it from that cluster first"
    ) in "\n".join(output)
    assert not (rack / "hosts" / "mds01" / "etc" / "corosync").exists()
    assert "cluster_name: other" in (other / "corosync.conf").read_text()
    assert not (other / "authkey").exists()
    assert on(rack, "mds01", "systemctl", "is-active", "pacemaker.service").returncode == 3


# Debian 12's corosync package installs this file (tabs and all) and starts the cluster.
DEBIAN_PACKAGE_CONF = """totem {
\tversion: 2
\tcluster_name: debian
\tcrypto_cipher: none
\tcrypto_hash: none
}
quorum {
\tprovider: corosync_votequorum
}
nodelist {
\tnode {
\t\tname: node1
\t\tnodeid: 1
\t\tring0_addr: 127.0.0.1
\t}
}
"""


def test_the_corosync_packages_example_cluster_is_replaced_not_refused(rack, plan, tmp_path):
    for host in ("mds01", "mds02"):
        etc = rack / "hosts" / host / "etc" / "corosync"
        etc.mkdir(parents=True)
        (etc / "corosync.conf").write_text(DEBIAN_PACKAGE_CONF)

    result = run(rack, plan, tmp_path)

    assert result.succeeded, result.summary()
    for host in ("mds01", "mds02"):
        conf = (rack / "hosts" / host / "etc" / "corosync" / "corosync.conf").read_text()
        assert conf == build_corosync_conf(plan)
    status = on(rack, "mds01", "crm_mon", "-1", "--output-as=xml").stdout
    assert '<node name="mds02" id="2" online="true"' in status
