"""systemctl: the cluster stack's services on a virtual server without a real cluster.

A virtual server has no systemd; corosync.yml still enables and starts the cluster stack with
`systemctl`, as on a real server, so this shim keeps each unit's state (enabled at boot, active
now) in `hosts/<host>/var/lib/systemd/ostara-virtual-units.json` and answers as systemd 252 does:

    systemctl enable corosync.service pacemaker.service  # "Created symlink ..." on stderr
    systemctl disable UNIT...             # "Removed ..." on stderr
    systemctl start|stop|restart UNIT...  # silent; 5 for an unknown unit
    systemctl is-enabled UNIT...          # enabled/disabled; 0 if one is enabled, else 1
    systemctl is-active UNIT...           # active/inactive; 0 if one is active, else 3

Only the units of the cluster stack exist (corosync.service, pacemaker.service; pacemaker
requires corosync, so starting it starts corosync and stopping corosync stops it). The
imitated Pacemaker tools (cibadmin, crm_mon, ...) answer whatever these say: the virtual rack's
cluster runs from the start, so its hundreds of scenarios need no playbook run first.

Starting pacemaker.service does what a real node's controller does when it joins: the node
(its id from corosync.conf) enters the pair's CIB and comes online, and the first node up is
the DC of a cluster with quorum (two_node), so `crm_mon` shows both nodes and a DC as on a real
cluster before any resource is configured.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

from simulator import cluster, procfs
from simulator.commands import Context
from simulator.commands.corosync_cfgtool import written_links

STATE_FILE = "var/lib/systemd/ostara-virtual-units.json"
# Unit -> the units it requires (started with it; it stops when one of them stops).
UNITS: dict[str, tuple[str, ...]] = {
    "corosync.service": (),
    "pacemaker.service": ("corosync.service",),
}
UNIT_DIR = "/lib/systemd/system"
WANTS_DIR = "/etc/systemd/system/multi-user.target.wants"


def _unit(name: str) -> str:
    return name if "." in name else f"{name}.service"


class Units:
    def __init__(self, ctx: Context) -> None:
        assert ctx.host, "systemctl runs on a virtual server"
        self.path = procfs.host_root(ctx.rack_root, ctx.host) / STATE_FILE
        self.state: dict[str, dict[str, bool]] = {
            unit: {"enabled": False, "active": False} for unit in UNITS
        }
        if self.path.exists():
            self.state.update(json.loads(self.path.read_text()))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.state, indent=1, sort_keys=True))
        os.replace(temporary, self.path)

    def start(self, unit: str) -> None:
        for required in UNITS[unit]:
            self.start(required)
        self.state[unit]["active"] = True

    def stop(self, unit: str) -> None:
        for other, requires in UNITS.items():
            if unit in requires:
                self.stop(other)
        self.state[unit]["active"] = False


def run(ctx: Context, argv: list[str]) -> int:
    argv = [word for word in argv if word not in ("--quiet", "-q", "--no-pager")]
    if len(argv) < 2:
        ctx.error("Too few arguments.")
        return 1
    verb, units = argv[0], [_unit(name) for name in argv[1:]]
    # A command on a powered-off server fails as ssh does.
    with ctx.rack(read_only=True):
        pass
    state = Units(ctx)
    unknown = [unit for unit in units if unit not in UNITS]
    if verb == "is-active":
        found = [bool(state.state.get(unit, {}).get("active")) for unit in units]
        for active in found:
            ctx.print("active" if active else "inactive")
        return 0 if any(found) else 3
    if verb == "is-enabled":
        code = 1
        for unit in units:
            if unit in unknown:
                ctx.error(f"Failed to get unit file state for {unit}: No such file or directory")
                continue
            enabled = state.state[unit]["enabled"]
            ctx.print("enabled" if enabled else "disabled")
            code = 0 if enabled else code
        return code
    if verb not in ("enable", "disable", "start", "stop", "restart"):
        ctx.error(f"Unknown command verb {verb}.")
        return 1
    if unknown:
        if verb in ("enable", "disable"):
            ctx.error(f"Failed to {verb} unit: Unit file {unknown[0]} does not exist.")
            return 1
        ctx.error(f"Failed to {verb} {unknown[0]}: Unit {unknown[0]} not found.")
        return 5
    for unit in units:
        if verb == "enable" and not state.state[unit]["enabled"]:
            state.state[unit]["enabled"] = True
            ctx.error(f"Created symlink {WANTS_DIR}/{unit} \u2192 {UNIT_DIR}/{unit}.")
        elif verb == "disable" and state.state[unit]["enabled"]:
            state.state[unit]["enabled"] = False
            ctx.error(f"Removed {WANTS_DIR}/{unit}.")
        elif verb == "start":
            state.start(unit)
        elif verb == "stop":
            state.stop(unit)
        elif verb == "restart":
            # Units requiring it are restarted with it (systemd's Requires=).
            dependents = [
                other
                for other, requires in UNITS.items()
                if unit in requires and state.state[other]["active"]
            ]
            state.stop(unit)
            for started in (unit, *dependents):
                state.start(started)
    state.save()
    if verb in ("start", "restart") and state.state["pacemaker.service"]["active"]:
        join(ctx)
    return 0


def join(ctx: Context) -> None:
    """The server's node joins its pair's cluster, as the controller of a starting node does."""
    written = written_links(ctx)
    with ctx.rack() as rack:
        pair = rack.state["servers"][ctx.host]["pair"]
        servers = rack.state["pairs"][pair]["servers"]
        names = written[0] if written and ctx.host in written[0] else servers
        nodeid = names.index(ctx.host) + 1
        path = cluster.ensure_cib(rack, pair)
        root = ET.parse(path).getroot()
        if root.find(f"./configuration/nodes/node[@uname='{ctx.host}']") is None:
            node = f'<node id="{nodeid}" uname="{ctx.host}"/>'
            cluster.run_tool("cibadmin", ["--create", "-o", "nodes", "--xml-text", node], path)
        if ctx.host not in cluster.read_view(path).online:
            cluster.run_tool(
                "crm_simulate", ["-x", str(path), "-O", str(path), "-u", ctx.host], path
            )
        tree = ET.parse(path)
        if not tree.getroot().get("dc-uuid"):
            tree.getroot().set("dc-uuid", str(nodeid))
            tree.getroot().set("have-quorum", "1")
            tree.write(path, encoding="unicode")
