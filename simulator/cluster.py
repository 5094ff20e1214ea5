"""Pacemaker on the virtual rack: the only module that talks to the cluster stack.

Each server pair keeps the cluster configuration pushed to it (`cibadmin --replace`, run
through the virtual `cibadmin`) in `DIR/pairs/<pair>/cib.xml`, status section included. When
something happens that a real cluster would react to (a node lost, a pulled LNet link, a
target that cannot start, an operator's `crm_resource --move`), `reconcile()` asks Pacemaker's
own policy engine what to do, with the real `crm_simulate`, and makes the rack match:

1. nodes that are up, run Pacemaker and hear their partner are brought up in the CIB status
   (`crm_simulate -u`); a node that stopped being a member is failed (`--node-fail`);
2. the node attributes that the Lustre health agents would set (`pingd` from `lctl ping` of
   the healthLNET host list, `lustred` from `health_check`) are written with `crm_attribute`;
3. what the rack knows is injected as operation results: probes (`monitor_0`) where a
   target's mount state differs from what the CIB believes, and failed starts
   (`--op-fail ..._start_0@node=1`) where mounting would fail (device not visible, volume
   group failed, MGS unreachable);
4. `crm_simulate -S` runs the transition; the rack fences the nodes it fences (the device
   that works, BMC first, then PDU, cuts the power; the node stays down until its failure is
   cleared or it is powered on, where a real cluster's default `stonith-action=reboot` powers
   it on again: simulator/IMITATION.md) and moves the targets to where Pacemaker puts them; the loop
   repeats until Pacemaker has nothing left to do.

Fencing is only simulated when the rack can really do it: stonith must be enabled, a fence
device in the CIB must target the node (`pcmk_host_list`), and its path must be up
(`fence_ipmilan` at the node's BMC address, a PDU agent at the node's PDU and outlet, on a
network the partner reaches). A node that cannot be fenced is never assumed dead: the
transition is not executed, the node stays UNCLEAN in the CIB and its targets stay down ("a pair
with no fencing configured does not fail over", DESIGN §2). With stonith-enabled=false Pacemaker
recovers without fencing, as a real cluster would.

The pair's Corosync links (simulator/IMITATION.md compares them with the real stack): a pair
whose servers have a `mgmt_address` and a `heartbeat_address` runs two knet links, link 0 on
the management network and link 1 on the private heartbeat network, as DESIGN's recipe and
the provisioning's corosync.conf do. Losing link 1 (a server's heartbeat port, or the private
switch) is then not a split: both nodes stay members of one cluster over link 0, nothing moves
and nobody is fenced, and the BMCs and PDUs, on the management network, can still fence. A
pair without those addresses has one link, on the private network that its BMCs and PDUs share:
a server whose heartbeat port is down is lost to its partner, which fences it; while the
private switch is down the two nodes cannot agree on anything and cannot fence, so nothing
moves.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from simulator import operations, topology
from simulator.procfs import host_healthy

PACEMAKER_TOOLS = (
    "cibadmin",
    "crm_mon",
    "crm_resource",
    "crm_attribute",
    "crm_simulate",
    "crm_verify",
)
IPMI_AGENTS = {
    "fence_ipmilan",
    "fence_ipmilanplus",
    "fence_idrac",
    "fence_ilo3",
    "fence_ilo4",
    "fence_ilo5",
    "fence_imm",
}
PDU_AGENTS = {
    "fence_apc_snmp",
    "fence_apc",
    "fence_raritan",
    "fence_eaton_snmp",
    "fence_wti",
    "fence_cdu",
}
FENCE_RE = re.compile(r"^\s*\* Fencing (\S+) \((\w+)\)")
MAX_ROUNDS = 8


def real_tool(name: str) -> str:
    """The real Pacemaker binary, never the virtual host's wrapper of the same name."""
    for directory in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"Pacemaker tool {name} is not installed")
    return found


def cib_path(rack, pair_name: str) -> Path:
    return rack.root / "pairs" / pair_name / "cib.xml"


def ensure_cib(rack, pair_name: str) -> Path:
    """The pair's CIB file, created empty (`cibadmin --empty`) the first time."""
    path = cib_path(rack, pair_name)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        empty = subprocess.run(
            [real_tool("cibadmin"), "--empty"], capture_output=True, text=True, check=True
        ).stdout
        path.write_text(empty)
    return path


def run_tool(name: str, args: list[str], cib: Path, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, CIB_file=str(cib))
    return subprocess.run(
        [real_tool(name), *args], capture_output=True, text=True, env=env, **kwargs
    )


# ---------------------------------------------------------------------------------------------
# reading the configuration


@dataclass
class FenceDevice:
    id: str
    agent: str
    params: dict[str, str]


@dataclass
class HealthAgent:
    kind: str  # healthLNET or healthLUSTRE
    attribute: str
    multiplier: int = 1
    host_list: list[str] = field(default_factory=list)


@dataclass
class PairConfig:
    stonith_enabled: bool = True
    lustre: dict[str, dict[str, str]] = field(default_factory=dict)  # resource id -> params
    fence_devices: list[FenceDevice] = field(default_factory=list)
    levels: dict[str, list[list[str]]] = field(default_factory=dict)  # node -> device ids
    health: list[HealthAgent] = field(default_factory=list)


def _params(element: ET.Element) -> dict[str, str]:
    return {
        nv.get("name"): nv.get("value", "")
        for attrs in element.findall("instance_attributes")
        for nv in attrs.findall("nvpair")
    }


def read_config(path: Path) -> PairConfig:
    config = PairConfig()
    root = ET.parse(path).getroot()
    for nv in root.iterfind("./configuration/crm_config//nvpair"):
        if nv.get("name") == "stonith-enabled":
            config.stonith_enabled = nv.get("value", "true").lower() in ("true", "1", "yes", "on")
    for primitive in root.iterfind("./configuration/resources//primitive"):
        params = _params(primitive)
        cls, agent = primitive.get("class"), primitive.get("type")
        if cls == "stonith":
            config.fence_devices.append(FenceDevice(primitive.get("id"), agent, params))
        elif cls == "ocf" and agent == "Lustre":
            config.lustre[primitive.get("id")] = params
        elif cls == "ocf" and agent in ("healthLNET", "healthLUSTRE"):
            default = "pingd" if agent == "healthLNET" else "lustred"
            config.health.append(
                HealthAgent(
                    agent,
                    params.get("name", default),
                    int(params.get("multiplier", "1") or 1),
                    params.get("host_list", "").split(),
                )
            )
    for level in root.iterfind("./configuration/fencing-topology/fencing-level"):
        config.levels.setdefault(level.get("target"), []).append(
            (int(level.get("index", "1")), level.get("devices", "").split(","))
        )
    for node, levels in config.levels.items():
        config.levels[node] = [devices for _index, devices in sorted(levels)]
    return config


@dataclass
class ClusterView:
    online: set[str] = field(default_factory=set)
    unclean: set[str] = field(default_factory=set)
    placement: dict[str, str | None] = field(default_factory=dict)
    standby: set[str] = field(default_factory=set)


def read_view(path: Path) -> ClusterView:
    """Where crm_mon says things are in this CIB file."""
    result = run_tool("crm_mon", ["-1", "--output-as=xml"], path)
    view = ClusterView()
    if result.returncode not in (0,) and not result.stdout.strip().startswith("<"):
        return view
    try:
        root = ET.fromstring(result.stdout)
    except ET.ParseError:
        return view
    for node in root.iterfind("./nodes/node"):
        if node.get("online") == "true":
            view.online.add(node.get("name"))
        if node.get("unclean") == "true":
            view.unclean.add(node.get("name"))
        if node.get("standby") == "true":
            view.standby.add(node.get("name"))
    for resource in root.iter("resource"):
        nodes = [n.get("name") for n in resource.findall("node")]
        active = (
            resource.get("active") == "true"
            and resource.get("role") == "Started"
            and resource.get("failed") != "true"
        )
        view.placement[resource.get("id")] = nodes[0] if active and nodes else None
    return view


# ---------------------------------------------------------------------------------------------
# the rack's side


def _pair_servers(rack, pair_name: str) -> list[str]:
    return list(rack.state["pairs"][pair_name]["servers"])


def io_given_up(rack, server: dict) -> bool:
    """Every SAS path of the server is gone and multipath has stopped queueing its I/O: the
    rack's `multipath_queue_seconds` (multipath.conf's no_path_retry x polling_interval; 0,
    the default, fails I/O at once as `no_path_retry fail` does) have passed."""
    if not server.get("io_hung"):
        return False
    since = server.get("io_hung_since", rack.now)
    return rack.now - since >= rack.state.get("multipath_queue_seconds", 0)


def is_member(rack, host: str) -> bool:
    """A node is in the cluster when it is up, runs Pacemaker and hears its partner. A node
    whose I/O hangs for good (every SAS path lost, multipath's queueing over) fails its stop
    operations and is treated as lost."""
    server = rack.state["servers"][host]
    return (
        server["state"] == "up"
        and server["pacemaker"]
        and hears_partner(rack, host)
        and not io_given_up(rack, server)
    )


def hears_partner(rack, host: str) -> bool:
    """With two knet links a node hears its partner over the management network's link 0
    whatever happens to its heartbeat port (the rack has no failure that cuts the management
    network); with one link, only through its heartbeat port."""
    server = rack.state["servers"][host]
    return topology.has_two_links(rack.state, server["pair"]) or server["heartbeat_up"]


def fence_device_for(rack, config: PairConfig, node: str) -> str | None:
    """'bmc' or 'pdu': the first fence level that can reach the node now; None if none can."""
    if not config.stonith_enabled:
        return None
    server = rack.state["servers"][node]
    devices = {d.id: d for d in config.fence_devices}
    levels = config.levels.get(node) or [[d.id] for d in config.fence_devices]
    outlet = (server.get("pdu_outlet") or ":").split(":", 1)
    for level in levels:
        for device_id in level:
            device = devices.get(device_id)
            if device is None:
                continue
            hosts = device.params.get("pcmk_host_list", "").replace(",", " ").split()
            mapped = [
                pair.split(":")[0]
                for pair in device.params.get("pcmk_host_map", "").replace(",", ";").split(";")
                if pair
            ]
            if node not in hosts + mapped:
                continue
            address = device.params.get("ip") or device.params.get("ipaddr")
            if not topology.fence_network_up(rack.state, server):
                continue
            if device.agent in IPMI_AGENTS and address == server.get("bmc"):
                if server["bmc_up"]:
                    return "bmc"
            elif device.agent in PDU_AGENTS:
                plug = device.params.get("plug") or device.params.get("port")
                if address == outlet[0] and str(plug) == outlet[1] and server["pdu_up"]:
                    return "pdu"
    return None


def _health_values(rack, config: PairConfig, node: str) -> dict[str, int]:
    state = rack.state
    values = {}
    for agent in config.health:
        if agent.kind == "healthLNET":
            answered = 0
            for nid in agent.host_list:
                peer = topology.server_of_nid(state, nid)
                if peer == node and state["servers"][node]["lnet_nids"]:
                    answered += int(state["servers"][node]["lnet_link_up"])
                elif (
                    peer
                    and topology.lnet_reachable(state, node)
                    and topology.lnet_reachable(state, peer)
                ):
                    answered += 1
            values[agent.attribute] = answered * agent.multiplier
        else:
            values[agent.attribute] = int(host_healthy(state, node))
    return values


def _target_of(rack, params: dict[str, str]) -> dict | None:
    volume = params.get("target", "").rsplit("/", 1)[-1]
    for target in rack.state["targets"].values():
        if target["volume"] == volume:
            return target
    return None


def _start_would_fail(rack, target: dict, node: str) -> bool:
    state = rack.state
    if not topology.host_sees_volume(state, node, target["volume"]):
        return True
    if topology.target_health(state, target) == "failed":
        return True
    if target["kind"] != "MGT":
        mgs_here = state["targets"].get("MGS", {}).get("mounted_on") == node
        if not mgs_here and not (
            topology.mgs_available(state) and topology.lnet_reachable(state, node)
        ):
            return True
    return False


def reconcile(rack, pair_name: str) -> list[dict]:
    """Let Pacemaker decide for one pair and make the rack match. Returns what happened."""
    pair = rack.state["pairs"][pair_name]
    path = cib_path(rack, pair_name)
    if pair.get("real_cluster"):
        return []  # its own Pacemaker decides (simulator.realcluster)
    if not pair.get("cib") or not path.exists():
        return []
    stamp_feature_set(path)
    config = read_config(path)
    servers = _pair_servers(rack, pair_name)
    events: list[dict] = []
    if not pair["private_switch_up"] and not topology.has_two_links(rack.state, pair_name):
        # One link, on the private network: the two nodes cannot hear each other nor fence.
        for host in servers:
            rack.state["servers"][host]["cluster"] = "partitioned"
        return events
    view = read_view(path)
    for _round in range(MAX_ROUNDS):
        members = [h for h in servers if is_member(rack, h)]
        lost = [h for h in servers if h not in members and (h in view.online or h in view.unclean)]
        blocked = [
            h for h in lost if config.stonith_enabled and fence_device_for(rack, config, h) is None
        ]
        args = []
        for host in members:
            if host not in view.online:
                args += ["-u", host]
        for host in lost:
            if host in view.online:
                args += ["--node-fail", host]
        for resource, params in config.lustre.items():
            target = _target_of(rack, params)
            if target is None:
                continue
            believed = view.placement.get(resource)
            for host in members:
                running = target.get("mounted_on") == host
                if running != (believed == host):
                    args += ["--op-inject", f"{resource}_monitor_0@{host}={0 if running else 7}"]
                if not running and _start_would_fail(rack, target, host):
                    args += ["--op-fail", f"{resource}_start_0@{host}=1"]
        execute = not blocked
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".xml", delete=False) as tmp:
            staged = Path(tmp.name)
        try:
            # The health agents' node attributes, then membership, probes and the transition.
            # A node in standby runs no health agent: their stop deleted its attributes (as
            # the real Pacemaker does), until it leaves standby and they start again.
            set_node_attributes(
                path,
                staged,
                {
                    host: dict.fromkeys(_health_values(rack, config, host))
                    if host in view.standby
                    else _health_values(rack, config, host)
                    for host in members
                },
            )
            run_args = ["-x", str(staged), "-O", str(staged)] + args
            result = run_tool("crm_simulate", run_args + (["-S"] if execute else ["-Q"]), path)
            if result.returncode != 0:
                raise RuntimeError(f"crm_simulate failed: {result.stderr.strip()}")
            os.replace(staged, path)
        finally:
            if staged.exists():
                staged.unlink()
        if not execute:
            for host in blocked:
                rack.state["servers"][host]["cluster"] = "unclean"
                events.append({"event": "fence-failed", "node": host})
            break
        fenced = [
            (m.group(1), m.group(2)) for m in map(FENCE_RE.match, result.stdout.splitlines()) if m
        ]
        for node, action in fenced:
            device = fence_device_for(rack, config, node) or "none"
            fence_node(rack, node, device, action)
            events.append({"event": "fenced", "node": node, "by": device, "action": action})
        view = read_view(path)
        moved = apply_placement(rack, config, view, members, events)
        for host in servers:
            server = rack.state["servers"][host]
            server["cluster"] = (
                "online" if host in members else ("unclean" if host in blocked else "offline")
            )
        # A failed action aborts Pacemaker's transition; it then computes a new one. Stop when
        # the scheduler has nothing left to do.
        if not fenced and not moved and not _wants_actions(result.stdout):
            break
    return events


def stamp_feature_set(path: Path) -> None:
    """A live cluster's DC stamps its CRM feature set on the CIB: without it the scheduler
    reads fail counts in the pre-1.1.17 per-resource format and ignores the per-operation
    ones a failed start writes, so a target would run again where its start failed."""
    tree = ET.parse(path)
    root = tree.getroot()
    if root.get("crm_feature_set"):
        return
    root.set("crm_feature_set", _feature_set())
    tree.write(path, encoding="unicode")


@functools.lru_cache(maxsize=1)
def _feature_set() -> str:
    """The installed Pacemaker's CRM feature set, as its empty CIB carries it. Not
    provisioning.ha's local_feature_set: that one runs `cibadmin` from PATH, which on a virtual
    host is the rack's own wrapper, waiting for the rack lock this process holds."""
    empty = subprocess.run(
        [real_tool("cibadmin"), "--empty"], capture_output=True, text=True, check=True
    ).stdout
    return ET.fromstring(empty).get("crm_feature_set", "")


def set_node_attributes(source: Path, destination: Path, values: dict[str, dict]) -> None:
    """Write transient node attributes (what attrd_updater does for the health agents) into
    the CIB status, creating a node's status entry if the cluster has none for it yet; a value
    of None deletes the attribute."""
    tree = ET.parse(source)
    root = tree.getroot()
    ids = {n.get("uname"): n.get("id") for n in root.iterfind("./configuration/nodes/node")}
    status = root.find("status")
    if status is None:
        status = ET.SubElement(root, "status")
    for node, attributes in values.items():
        node_id = ids.get(node, node)
        state = next((s for s in status.findall("node_state") if s.get("uname") == node), None)
        if state is None:
            state = ET.SubElement(status, "node_state", id=node_id, uname=node)
        transient = state.find("transient_attributes")
        if transient is None:
            transient = ET.SubElement(state, "transient_attributes", id=node_id)
        nvset = transient.find("instance_attributes")
        if nvset is None:
            nvset = ET.SubElement(transient, "instance_attributes", id=f"status-{node_id}")
        for name, value in attributes.items():
            pair = next((nv for nv in nvset.findall("nvpair") if nv.get("name") == name), None)
            if value is None:  # deleted, as attrd_updater -D
                if pair is not None:
                    nvset.remove(pair)
                continue
            if pair is None:
                pair = ET.SubElement(nvset, "nvpair", id=f"status-{node_id}-{name}", name=name)
            pair.set("value", str(value))
    tree.write(destination, encoding="unicode")


def _wants_actions(output: str) -> bool:
    """Whether crm_simulate's transition summary lists any action."""
    summary = output.split("Transition Summary:", 1)[-1].split("Executing", 1)[0]
    return any(line.strip().startswith("*") for line in summary.splitlines())


def fence_node(rack, node: str, device: str, action: str) -> None:
    """The fence device cuts the node's power. A fenced node stays down (it does not rejoin
    by itself: failback is an operator's act) until its failure is cleared or an operator
    powers it on with ipmitool."""
    state = rack.state
    server = state["servers"][node]
    operations.power_off(state, node)
    server["pacemaker"] = False
    state["fence_history"].append({"node": node, "by": device, "action": action, "time": rack.now})


def apply_placement(
    rack, config: PairConfig, view: ClusterView, members: list[str], events: list[dict]
) -> bool:
    """Stop and start targets so the rack matches the CIB. True when anything changed."""
    state = rack.state
    changed = False
    wanted: dict[str, str | None] = {}
    for resource, params in config.lustre.items():
        target = _target_of(rack, params)
        if target is not None:
            wanted[target["label"]] = view.placement.get(resource)
    for label, node in wanted.items():
        target = state["targets"][label]
        current = target.get("mounted_on")
        if current and current != node:
            operations.release_target(state, target)
            changed = True
            events.append({"event": "stopped", "target": label, "node": current})
    for label, node in sorted(wanted.items(), key=lambda item: item[0] != "MGS"):
        target = state["targets"][label]
        if node and target.get("mounted_on") != node and node in members:
            try:
                operations.mount_target(
                    state,
                    node,
                    target["device"],
                    target.get("mountpoint") or params_mountpoint(config, label, rack),
                    rack.now,
                )
                changed = True
                events.append({"event": "started", "target": label, "node": node})
            except operations.OperationError as problem:
                events.append(
                    {"event": "start-failed", "target": label, "node": node, "error": str(problem)}
                )
    return changed


def params_mountpoint(config: PairConfig, label: str, rack) -> str:
    for params in config.lustre.values():
        target = _target_of(rack, params)
        if target is not None and target["label"] == label:
            return params.get("mountpoint", f"/mnt/lustre/{label}")
    return f"/mnt/lustre/{label}"


def note_manual_change(rack, host: str) -> list[dict]:
    """A target was mounted or unmounted by hand: a managed pair notices it (probes)."""
    return reconcile(rack, rack.state["servers"][host]["pair"])


def tick(rack) -> None:
    """Called every refresh: nothing to do unless a pair was marked for reconciling, or a
    server's queued I/O has just been given up (its partner then fences it)."""
    servers = rack.state["servers"]
    for pair_name, pair in rack.state["pairs"].items():
        given_up = any(
            servers[host]["cluster"] == "online" and io_given_up(rack, servers[host])
            for host in pair["servers"]
        )
        if pair.pop("dirty", False) or given_up:
            reconcile(rack, pair_name)
