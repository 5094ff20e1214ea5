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
import time
from pathlib import Path

from simulator.state import RackError

from . import bmc, faults, network, node, shims

NEEDED = ("corosync", "pacemakerd", "fence_ipmilan", "ipmi_sim", "ipmitool", "nsenter", "unshare")


# The rack's two networks: the management one (servers and BMCs) and the heartbeat one.
FIELDS = {"mgmt_address": "169.254.1.", "bmc": "169.254.1.", "heartbeat_address": "169.254.2."}


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
        for field, subnet in FIELDS.items():
            if not server.get(field):
                raise RackError(f"servers[{index}].{field}: a real-cluster pair needs it ({host})")
            address = network.link_local(server[field], f"servers[{index}].{field}")
            if not address.startswith(subnet) or address == network.SWITCH_ADDRESS:
                raise RackError(
                    f"servers[{index}].{field}: {address} is not on the rack's {subnet}0/24 "
                    f"network (or is the switch's own {network.SWITCH_ADDRESS})"
                )
    entry["real_cluster"] = True


def start(rack_root: Path, state: dict) -> None:
    """Cable every real-cluster server and start its BMC (which powers it on). Idempotent:
    `serve` calls it too, so a rack outlives a reboot of the machine, and a start that failed
    half-way is finished; cables a recorded failure pulled stay pulled."""
    if missing := missing_tools():
        raise RackError(f"a real cluster needs {', '.join(missing)} (make install)")
    prefix = network.prefix_for(rack_root)
    for host in real_hosts(state):
        server = state["servers"][host]
        network.ensure_server(prefix, host, server["mgmt_address"], server["heartbeat_address"])
        network.ensure_bmc(prefix, host, server["bmc"])
    for pair in {state["servers"][host]["pair"] for host in real_hosts(state)}:
        faults.sync_cables(rack_root, state, pair)
    for host in real_hosts(state):
        shims.install(rack_root, host)
        bmc.start(rack_root, host, state["servers"][host]["bmc"])


def stop(rack_root: Path, state: dict) -> None:
    """Power everything off and take the wires away (a test's teardown, a removed rack)."""
    for host in real_hosts(state):
        bmc.stop(rack_root, host)
    network.remove(network.prefix_for(rack_root))


def remove(rack_root: Path, state: dict, wait: float = 20.0) -> list[str]:
    """`python -m simulator remove-real`: `stop`, then wait until every server's `boot` has
    written it off in the rack and every process of the pair's BMCs and servers has exited (a
    `boot` that has written itself off is still a running interpreter for a moment; call it
    without holding the rack's lock). The servers that were running."""
    hosts = real_hosts(state)
    running = [h for h in hosts if node.boot_pid(rack_root, h) is not None]
    ours = _descendants(
        pid
        for host in hosts
        for pid in (
            bmc.pid_of(rack_root, host),
            node.boot_pid(rack_root, host),
            node.init_pid(rack_root, host),
        )  # fmt: skip
        if pid
    )
    stop(rack_root, state)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and (
        any(node.boot_pid(rack_root, h) for h in running) or any(map(_runs, ours))
    ):
        time.sleep(0.1)
    return running


def _descendants(pids) -> set[int]:
    """The processes and every process under them, as /proc shows them now."""
    found: set[int] = set()
    queue = list(pids)
    while queue:
        pid = queue.pop()
        if pid in found:
            continue
        found.add(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                queue += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return found


def _runs(pid: int) -> bool:
    """Alive and not a zombie (a zombie has run its last instruction; its parent reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


__all__ = [
    "bmc", "faults", "is_real", "mark_real", "network", "node", "real_hosts", "remove", "start",
    "stop",
]  # fmt: skip
