"""Real clusters under the virtual servers: Corosync, Pacemaker and IPMI fencing that really run.

A pair added with `python -m simulator add --real-cluster` keeps its Lustre targets, arrays and
kernel files virtual, but its cluster is the real one: each server has its own network, mount,
UTS, IPC and PID namespaces (`network.py`, `node.py`) with the real `corosync` and `pacemakerd`,
its BMC is OpenIPMI's `ipmi_sim` (`bmc.py`) whose power is the server's processes, fencing is the
real `fence_ipmilan` (and a virtual PDU agent, `pdu.py`), and the resource agents Pacemaker runs
mount the virtual targets (`agents.py`). Nothing in the playbooks differs: the server's `bin/`
has wrappers that run the real tools inside it, and a narrow `systemctl` shim (`shims.py`).
Needs root, `ip netns`, and the Debian packages corosync, pacemaker, fence-agents, openipmi
and ipmitool.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from simulator.state import RackError

from . import bmc, network, node, shims

NEEDED = ("corosync", "pacemakerd", "fence_ipmilan", "ipmi_sim", "ipmitool", "nsenter", "unshare")


def missing_tools() -> list[str]:
    return [t for t in NEEDED if shutil.which(t) is None and not Path(f"/usr/sbin/{t}").exists()]


def is_real(state: dict, pair: str) -> bool:
    return bool(state["pairs"].get(pair, {}).get("real_cluster"))


def real_hosts(state: dict) -> list[str]:
    return [h for h, s in state["servers"].items() if is_real(state, s["pair"])]


def mark_real(state: dict, pair: str) -> None:
    """Check the pair's addresses and mark its cluster real (rack.json)."""
    entry = state["pairs"][pair]
    for index, host in enumerate(entry["servers"]):
        server = state["servers"][host]
        for field in ("mgmt_address", "heartbeat_address", "bmc"):
            if not server.get(field):
                raise RackError(f"servers[{index}].{field}: a real-cluster pair needs it ({host})")
            network.link_local(server[field], f"servers[{index}].{field}")
    entry["real_cluster"] = True


def start(rack_root: Path, state: dict) -> None:
    """Cable every real-cluster server and start its BMC (which powers it on). Idempotent:
    `serve` calls it too, so a rack outlives a reboot of the machine."""
    if missing := missing_tools():
        raise RackError(f"a real cluster needs {', '.join(missing)} (make install)")
    prefix = network.prefix_for(rack_root)
    for host in real_hosts(state):
        server = state["servers"][host]
        network.ensure_server(prefix, host, server["mgmt_address"], server["heartbeat_address"])
        shims.install(rack_root, host)
        bmc.start(rack_root, host, server["bmc"])


def stop(rack_root: Path, state: dict) -> None:
    """Power everything off and take the wires away (a test's teardown, a removed rack)."""
    for host in real_hosts(state):
        bmc.stop(rack_root, host)
    network.remove(network.prefix_for(rack_root))


__all__ = ["bmc", "is_real", "mark_real", "network", "node", "real_hosts", "start", "stop"]
