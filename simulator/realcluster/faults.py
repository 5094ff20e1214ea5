"""The failure matrix on a real-cluster pair: each failure is what it really is.

`simulator inject` writes the failure into the rack (rack.json "failures", the flags the
portal and `simulator status` read) and then does it to the pair's real hardware:

- server-crash: a kernel panic. Its PID 1 is killed, so every process of the server dies; the
  BMC still answers and reports the power on (`node.boot` waits for the power off).
- heartbeat-down: the server's heartbeat cable (hb0) is pulled at the switch.
- private-switch-down: both servers' heartbeat cables.
- bmc-down: the BMC's cable is pulled: nobody on the management network reaches it.
- pdu-down: the PDU stops answering for that outlet (`pdu.py` reads `pdu_up`).

`clear` puts the cables back (a cable is in when nothing the rack still records pulls it) and
powers a crashed server on again through its BMC, as an operator would: `chassis power cycle`
when the BMC still reports it on, `chassis power on` when it is off. A server its partner has
fenced and rebooted meanwhile runs already and is left alone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from simulator.state import RackError

from . import bmc, network, node


def sync_cables(rack_root: Path, state: dict, pair: str) -> None:
    """Each server's heartbeat and BMC cables as the rack's failures leave them."""
    prefix = network.prefix_for(rack_root)
    switch_up = state["pairs"][pair].get("private_switch_up", True)
    for host in state["pairs"][pair]["servers"]:
        server = state["servers"][host]
        network.set_link(prefix, host, "hb", up=switch_up and server.get("heartbeat_up", True))
        network.set_link(prefix, host, "bmc", up=server.get("bmc_up", True))


def crash(rack_root: Path, state: dict, host: str) -> None:
    """The server panics: every process dies at once, its power stays on."""
    pid = node.init_pid(rack_root, host)
    if pid is None:
        raise RackError(f"{host} is not running")
    os.kill(pid, signal.SIGKILL)
    node.mark_crashed(state, host)


def power_on_again(rack_root: Path, state: dict, host: str) -> None:
    """An operator's restart of a server that is not running, through its BMC."""
    if node.init_pid(rack_root, host) is not None:
        return  # fenced and rebooted by its partner already
    address = state["servers"][host]["bmc"]
    status = bmc.local_ipmitool(rack_root, host, address, "chassis", "power", "status")
    action = "cycle" if "is on" in status.stdout else "on"
    done = bmc.local_ipmitool(rack_root, host, address, "chassis", "power", action)
    if done.returncode != 0:
        raise RackError(f"{host}'s BMC did not power it on: {done.stderr.strip()}")
