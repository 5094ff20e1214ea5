"""Every row of the failure matrix (DESIGN §2), injected and cleared on a rack whose server
pairs run the Pacemaker configuration built by provisioning.ha. Where targets go is decided by
crm_simulate on the pair's CIB; the tests check the rack's state, what the commands show and,
through the real crm_mon, what Pacemaker believes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from sensors import parsers
from simulator import failures
from simulator.rack import Rack
from simulator.tests.conftest import simulator_cli

pytestmark = pytest.mark.rack(seconds=90)

OSS01_TARGETS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]
OSS02_TARGETS = [f"scratch-OST{i:04x}" for i in range(1, 24, 2)]


def inject(root, kind, **where):
    with Rack.open(root) as rack:
        failure = failures.inject(rack, kind, **where)
        rack.render()
    return failure


def clear(root, failure_id):
    with Rack.open(root) as rack:
        failures.clear(rack, failure_id)
        rack.render()


def state(root):
    with Rack.open(root, save_counters=False) as rack:
        return rack.state


def placement(root, labels):
    targets = state(root)["targets"]
    return {label: targets[label]["mounted_on"] for label in labels}


def crm_placement(host_cmd, host="oss02"):
    """Where Pacemaker itself (crm_mon --output-as=xml on the pair's CIB) runs each target."""
    result = host_cmd(host, "crm_mon", "--output-as=xml")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    where = {}
    for resource in root.iter("resource"):
        if resource.get("resource_agent") == "ocf:lustre:Lustre":
            nodes = [n.get("name") for n in resource.findall("node")]
            where[resource.get("id")] = nodes[0] if resource.get("role") == "Started" else None
    nodes = {n.get("name"): n.attrib for n in root.iter("node") if n.get("type") == "member"}
    return where, nodes


def test_pushed_cib_keeps_targets_on_their_primaries(clustered_rack, host_cmd):
    where, nodes = crm_placement(host_cmd)
    assert {label: where[label] for label in OSS01_TARGETS} == dict.fromkeys(OSS01_TARGETS, "oss01")
    assert {label: where[label] for label in OSS02_TARGETS} == dict.fromkeys(OSS02_TARGETS, "oss02")
    assert nodes["oss01"]["online"] == "true"


def test_server_crash_partner_fences_and_takes_over(clustered_rack, host_cmd):
    failure = inject(clustered_rack, "server-crash", server="oss01")
    where, nodes = crm_placement(host_cmd)
    assert all(where[label] == "oss02" for label in OSS01_TARGETS)
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    history = state(clustered_rack)["fence_history"]
    assert [(h["node"], h["by"]) for h in history] == [("oss01", "bmc")]
    assert nodes["oss01"]["online"] == "false"
    # the fenced server is down and out of the cluster until it is repaired
    server = state(clustered_rack)["servers"]["oss01"]
    assert server["state"] == "off" and server["cluster"] == "offline" and not server["mounts"]
    assert host_cmd("oss01", "lctl", "dl").returncode == 255
    # its partner serves 24 OSTs now, seen by a sensor
    obdfilter = clustered_rack / "hosts/oss02/proc/fs/lustre/obdfilter"
    assert len(list(obdfilter.iterdir())) == 24
    recovery = parsers.parse_recovery_status(
        (obdfilter / "scratch-OST0000/recovery_status").read_text()
    )
    assert recovery["status"] == "RECOVERING"

    clear(clustered_rack, failure["id"])
    where, nodes = crm_placement(host_cmd)
    assert nodes["oss01"]["online"] == "true"
    # no automatic failback: stickiness keeps the targets on the partner
    assert all(where[label] == "oss02" for label in OSS01_TARGETS)
    # failback is the operator's act
    moved = host_cmd("oss02", "crm_resource", "--move", "-r", "scratch-OST0000", "-N", "oss01")
    assert moved.returncode == 0, moved.stderr
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": "oss01"}
    assert host_cmd("oss02", "crm_resource", "--clear", "-r", "scratch-OST0000").returncode == 0
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": "oss01"}


def test_one_link_heartbeat_down_partner_fences_and_takes_over(clustered_rack, host_cmd):
    """A pair racked without link addresses has one Corosync link: losing it is a split."""
    failure = inject(clustered_rack, "heartbeat-down", server="oss01")
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    assert [h["node"] for h in state(clustered_rack)["fence_history"]] == ["oss01"]
    clear(clustered_rack, failure["id"])
    _where, nodes = crm_placement(host_cmd)
    assert nodes["oss01"]["online"] == "true"


def test_lnet_down_targets_relocate_without_fencing(clustered_rack, host_cmd):
    failure = inject(clustered_rack, "lnet-down", server="oss01")
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    assert state(clustered_rack)["fence_history"] == []
    pingd = host_cmd(
        "oss01", "crm_attribute", "-N", "oss01", "-n", "pingd", "-l", "reboot", "-G", "-q"
    )
    assert pingd.stdout.strip() == "0"
    assert host_cmd("oss01", "lctl", "ping", "10.10.0.12@o2ib").returncode != 0
    assert "status: down" in host_cmd("oss01", "lnetctl", "net", "show").stdout
    clear(clustered_rack, failure["id"])
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    pingd = host_cmd(
        "oss01", "crm_attribute", "-N", "oss01", "-n", "pingd", "-l", "reboot", "-G", "-q"
    )
    assert int(pingd.stdout) > 0


def test_one_link_private_switch_down_nothing_moves_and_fencing_is_impossible(
    clustered_rack, host_cmd
):
    """One link, on the private network that the BMCs and PDUs share: no agreement, no
    fencing."""
    failure = inject(clustered_rack, "private-switch-down", pair="ssu01")
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss01")
    servers = state(clustered_rack)["servers"]
    assert servers["oss01"]["cluster"] == servers["oss02"]["cluster"] == "partitioned"
    bmc = host_cmd(
        None,
        "ipmitool",
        "-I",
        "lanplus",
        "-H",
        "10.20.0.11",
        "-U",
        "admin",
        "-P",
        "x",
        "chassis",
        "power",
        "status",
    )
    assert bmc.returncode == 1
    assert "Unable to establish IPMI v2 / RMCP+ session" in bmc.stderr
    # a crash now cannot be fenced: the partner never assumes it dead, nothing fails over
    crash = inject(clustered_rack, "server-crash", server="oss01")
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, None)
    assert state(clustered_rack)["fence_history"] == []
    clear(clustered_rack, failure["id"])
    # fencing works again: the crashed node is fenced and its targets move
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    clear(clustered_rack, crash["id"])


@pytest.fixture
def two_link_rack(clustered_rack):
    """The clustered rack with ssu01 racked as DESIGN's recipe cables it: Corosync link 0 on
    the management network, link 1 on the private heartbeat network."""
    with Rack.open(clustered_rack) as rack:
        for number, host in ((11, "oss01"), (12, "oss02")):
            server = rack.state["servers"][host]
            server.update(
                mgmt_address=f"169.254.1.{number}", heartbeat_address=f"169.254.2.{number}"
            )
    return clustered_rack


def links(host_cmd, host):
    """Each knet link's state of the partner, as `corosync-cfgtool -s` prints it."""
    shown = host_cmd(host, "corosync-cfgtool", "-s")
    assert shown.returncode == 0, shown.stderr
    words = [line.split()[-1] for line in shown.stdout.splitlines() if "nodeid:" in line]
    return [word for word in words if word != "localhost"]


def partner_power(host_cmd, bmc):
    answer = host_cmd(
        None, "ipmitool", "-I", "lanplus", "-H", bmc, "-U", "a", "-P", "b",
        "chassis", "power", "status",
    )  # fmt: skip
    return answer.returncode, answer.stdout


def crash_is_fenced_by_its_bmc(root):
    """oss01 crashes: its BMC fences it and oss02 takes its targets."""
    crash = inject(root, "server-crash", server="oss01")
    assert [(h["node"], h["by"]) for h in state(root)["fence_history"]] == [("oss01", "bmc")]
    assert placement(root, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    return crash


def test_two_links_one_heartbeat_port_down_is_not_a_split(two_link_rack, host_cmd):
    """Measured on the real stack (Corosync 3.1.7, knet): link 1 disconnected, link 0
    connected, one cluster, no fencing, nothing moves."""
    assert links(host_cmd, "oss02") == ["connected", "connected"]
    failure = inject(two_link_rack, "heartbeat-down", server="oss01")
    assert links(host_cmd, "oss02") == ["connected", "disconnected"]
    assert links(host_cmd, "oss01") == ["connected", "disconnected"]
    assert placement(two_link_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss01")
    assert state(two_link_rack)["fence_history"] == []
    _where, nodes = crm_placement(host_cmd)
    assert nodes["oss01"]["online"] == nodes["oss02"]["online"] == "true"
    # A crash meanwhile is still fenced and failed over: the cluster runs on link 0.
    crash = crash_is_fenced_by_its_bmc(two_link_rack)
    clear(two_link_rack, crash["id"])
    clear(two_link_rack, failure["id"])
    assert links(host_cmd, "oss02") == ["connected", "connected"]


def test_two_links_private_switch_down_keeps_one_cluster_and_fencing(two_link_rack, host_cmd):
    """Both heartbeat links down: one cluster over the management link, and the BMCs and PDUs,
    on the management network, still fence (the real stack, measured)."""
    failure = inject(two_link_rack, "private-switch-down", pair="ssu01")
    for host in ("oss01", "oss02"):
        assert links(host_cmd, host) == ["connected", "disconnected"]
        assert state(two_link_rack)["servers"][host]["cluster"] == "online"
    assert placement(two_link_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss01")
    assert partner_power(host_cmd, "10.20.0.11") == (0, "Chassis Power is on\n")
    pdu = host_cmd(
        "oss02", "fence_apc_snmp", "--ip=pdu1", "--plug=11", "--username=u",
        "--password-script=/bin/true", "--action=status",
    )  # fmt: skip
    assert (pdu.returncode, pdu.stdout) == (0, "Status: ON\n")
    crash = crash_is_fenced_by_its_bmc(two_link_rack)
    assert partner_power(host_cmd, "10.20.0.11") == (0, "Chassis Power is off\n")
    clear(two_link_rack, crash["id"])
    clear(two_link_rack, failure["id"])
    assert links(host_cmd, "oss01") == ["connected", "connected"]


def test_bmc_down_the_pdu_fences_instead(clustered_rack, host_cmd):
    bmc = inject(clustered_rack, "bmc-down", server="oss01")
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss01")
    answer = host_cmd(
        None, "ipmitool", "-I", "lanplus", "-H", "10.20.0.11", "-U", "a", "-P", "b", "sdr"
    )
    assert answer.returncode == 1
    crash = inject(clustered_rack, "server-crash", server="oss01")
    assert [(h["node"], h["by"]) for h in state(clustered_rack)["fence_history"]] == [
        ("oss01", "pdu")
    ]
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    clear(clustered_rack, crash["id"])
    clear(clustered_rack, bmc["id"])
    assert (
        host_cmd(
            None,
            "ipmitool",
            "-I",
            "lanplus",
            "-H",
            "10.20.0.11",
            "-U",
            "a",
            "-P",
            "b",
            "chassis",
            "power",
            "status",
        ).stdout
        == "Chassis Power is on\n"
    )


def test_no_fence_device_no_failover(clustered_rack, host_cmd, tmp_path, ssu_plan):
    from provisioning.ha import build_cib

    cib = ET.fromstring(build_cib(ssu_plan))
    resources = cib.find("./configuration/resources")
    for primitive in resources.findall("primitive"):
        if primitive.get("class") == "stonith":
            resources.remove(primitive)
    constraints = cib.find("./configuration/constraints")
    for location in constraints.findall("rsc_location"):
        if location.get("rsc", "").startswith("fence-"):
            constraints.remove(location)
    topology = cib.find("./configuration/fencing-topology")
    if topology is not None:
        cib.find("./configuration").remove(topology)
    cib.set("epoch", "100")
    path = tmp_path / "nofence.xml"
    path.write_text(ET.tostring(cib, encoding="unicode"))
    pushed = host_cmd("oss01", "cibadmin", "--replace", "--xml-file", str(path))
    assert pushed.returncode == 0, pushed.stderr
    inject(clustered_rack, "server-crash", server="oss01")
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, None)
    assert state(clustered_rack)["fence_history"] == []
    mon = host_cmd("oss02", "crm_mon", "-1")
    assert "UNCLEAN" in mon.stdout


def test_one_sas_link_down_multipath_keeps_the_path(clustered_rack, host_cmd):
    failure = inject(clustered_rack, "sas-link-down", server="oss01", links=1)
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss01")
    status = state(clustered_rack)["servers"]["oss01"]["sas"]
    assert sorted(up for links in status.values() for up in links.values()) == [
        False,
        True,
        True,
        True,
    ]
    shown = host_cmd(None, "SMcli", "-n", "ssu01-a", "-S", "-c", "show allControllers;").stdout
    assert "Host interface SAS to oss01: Down" in shown
    clear(clustered_rack, failure["id"])
    assert (
        "Down"
        not in host_cmd(None, "SMcli", "-n", "ssu01-a", "-S", "-c", "show allControllers;").stdout
    )


def test_all_sas_links_down_targets_fail_over(clustered_rack):
    failure = inject(clustered_rack, "sas-link-down", server="oss01", links=0)
    assert placement(clustered_rack, OSS01_TARGETS) == dict.fromkeys(OSS01_TARGETS, "oss02")
    assert [h["node"] for h in state(clustered_rack)["fence_history"]] == ["oss01"]
    assert not (clustered_rack / "hosts/oss01/dev/mapper/scratch-OST0000").exists()
    clear(clustered_rack, failure["id"])
    assert (clustered_rack / "hosts/oss01/dev/mapper/scratch-OST0000").exists()
    assert state(clustered_rack)["servers"]["oss01"]["cluster"] == "online"


def vg_state(root, array, group):
    result = simulator_cli("status", "--rack", str(root), "--json")
    return json.loads(result.stdout)["arrays"][array]["volume_groups"][group]


def test_drive_failures_degrade_then_lose_the_group(clustered_rack, host_cmd):
    one = inject(clustered_rack, "drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00")
    assert vg_state(clustered_rack, "ssu01-a", "ssu01-a-vg00")["state"] == "degraded"
    health = host_cmd(
        None, "SMcli", "-n", "ssu01-a", "-S", "-c", "show storageArray healthStatus;"
    ).stdout
    assert "Failed Drive" in health and "Degraded Volume Group" in health
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": "oss01"}
    two = inject(clustered_rack, "drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00")
    group = vg_state(clustered_rack, "ssu01-a", "ssu01-a-vg00")
    assert group["state"] == "critical" and group["redundancy_left"] == 0
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": "oss01"}
    three = inject(clustered_rack, "drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00")
    assert vg_state(clustered_rack, "ssu01-a", "ssu01-a-vg00")["state"] == "failed"
    # the OST is lost: served nowhere; Pacemaker could not start it on either server
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": None}
    status = json.loads(simulator_cli("status", "--rack", str(clustered_rack), "--json").stdout)
    assert status["targets"]["scratch-OST0000"]["health"] == "failed"
    # every other OST is still served by one of the two servers
    others = placement(clustered_rack, OSS01_TARGETS[1:] + OSS02_TARGETS)
    assert all(node in ("oss01", "oss02") for node in others.values())
    for failure in (three, two, one):
        clear(clustered_rack, failure["id"])
    assert vg_state(clustered_rack, "ssu01-a", "ssu01-a-vg00")["state"] == "optimal"
    # Its starts failed on both servers: as a real cluster, Pacemaker does not try again
    # until the operator cleans up its failures (pcs resource cleanup); then it runs home.
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": None}
    cleanup = host_cmd("oss01", "crm_resource", "--cleanup", "-r", "scratch-OST0000")
    assert cleanup.returncode == 0, cleanup.stderr
    assert "Cleaned up scratch-OST0000 on oss01" in cleanup.stdout
    assert placement(clustered_rack, ["scratch-OST0000"]) == {"scratch-OST0000": "oss01"}
    assert host_cmd("oss01", "crm_resource", "--cleanup").stdout == ""  # nothing left


def test_drawer_failure_degrades_every_group_in_the_enclosure(clustered_rack):
    failure = inject(clustered_rack, "drawer-failed", array="ssu01-a", enclosure=0, drawer=3)
    result = json.loads(simulator_cli("status", "--rack", str(clustered_rack), "--json").stdout)
    groups = result["arrays"]["ssu01-a"]["volume_groups"]
    in_shelf = [f"ssu01-a-vg{n:02d}" for n in range(6)]  # the controller enclosure's 6 groups
    assert all(
        groups[g]["state"] == "degraded" and groups[g]["missing_drives"] == 2 for g in in_shelf
    )
    assert all(groups[f"ssu01-a-vg{n:02d}"]["state"] == "optimal" for n in range(6, 12))
    mounted = placement(clustered_rack, OSS01_TARGETS + OSS02_TARGETS)
    assert all(mounted.values())  # all online
    clear(clustered_rack, failure["id"])
    result = json.loads(simulator_cli("status", "--rack", str(clustered_rack), "--json").stdout)
    assert all(
        g["state"] == "optimal" for g in result["arrays"]["ssu01-a"]["volume_groups"].values()
    )


def test_controller_failure_partner_serves_all_volumes(clustered_rack, host_cmd):
    failure = inject(clustered_rack, "controller-failed", array="ssu01-a", controller="A")
    shown = host_cmd(None, "SMcli", "-n", "ssu01-a", "-S", "-c", "show allVolumes;").stdout
    owners = [line.split()[-1] for line in shown.splitlines()[1:] if line.strip()]
    assert len(owners) == 12 and set(owners) == {"B"}
    health = host_cmd(
        None, "SMcli", "-n", "ssu01-a", "-S", "-c", "show storageArray healthStatus;"
    ).stdout
    assert "Offline Controller" in health
    assert all(placement(clustered_rack, OSS01_TARGETS + OSS02_TARGETS).values())
    clear(clustered_rack, failure["id"])
    shown = host_cmd(None, "SMcli", "-n", "ssu01-a", "-S", "-c", "show allVolumes;").stdout
    assert {line.split()[-1] for line in shown.splitlines()[1:] if line.strip()} == {"A", "B"}


@pytest.mark.parametrize("kind", ["pdu-down"])
def test_cli_injects_and_clears(clustered_rack, kind):
    result = simulator_cli(
        "inject", "--rack", str(clustered_rack), kind, "--server", "oss02", "--json"
    )
    assert result.returncode == 0, result.stderr
    failure = json.loads(result.stdout)
    assert state(clustered_rack)["servers"]["oss02"]["pdu_up"] is False
    result = simulator_cli("clear", "--rack", str(clustered_rack), failure["id"])
    assert result.returncode == 0 and f"cleared {failure['id']}" in result.stdout
    assert state(clustered_rack)["servers"]["oss02"]["pdu_up"] is True
    assert state(clustered_rack)["failures"] == {}


def node_attributes(host_cmd, node: str) -> dict[str, str]:
    result = host_cmd("oss02", "crm_mon", "--output-as=xml", "--include=attributes")
    root = ET.fromstring(result.stdout)
    found = root.find(f"./node_attributes/node[@name='{node}']")
    return {a.get("name"): a.get("value") for a in found} if found is not None else {}


def test_standby_stops_the_health_agents_and_their_attributes_go(clustered_rack, host_cmd):
    # As on the real Pacemaker: a node in standby runs no clone instance, and the health
    # agents' stop deletes pingd and lustred; out of standby they are set again.
    assert {"pingd", "lustred"} <= set(node_attributes(host_cmd, "oss01"))
    standby = ["crm_attribute", "--node", "oss01", "--name", "standby", "--update"]
    assert host_cmd("oss01", *standby, "on").returncode == 0
    assert not {"pingd", "lustred"} & set(node_attributes(host_cmd, "oss01"))
    assert set(placement(clustered_rack, OSS01_TARGETS).values()) == {"oss02"}
    assert host_cmd("oss01", *standby, "off").returncode == 0
    assert {"pingd", "lustred"} <= set(node_attributes(host_cmd, "oss01"))
