"""The switched PDU's outlets for real-cluster servers: what the virtual `fence_apc_snmp` does.

Options as fenced passes them (`key=value` lines on stdin) or as the command line gives them
(`--action=off --ip=pdu1 --plug=3`, `-o metadata`). The server on outlet `<ip>:<plug>` loses
power at once on `off` (its processes die: `node.py`), and `on` asks its BMC (from the BMC's
own namespace: the PDU feeds the BMC, not its network) to power it on, as a server set to restore
power does. A PDU that is down, or a pair whose private switch is down, does not answer:
"Connection timed out", exit 1, as the real agent reports a silent PDU.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from simulator.rack import Rack

from . import agents, bmc, network, node

METADATA = Path(agents.METADATA)


def _options(argv: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    if not argv:
        for line in sys.stdin.read().splitlines():
            key, _, value = line.partition("=")
            if key.strip() and not key.startswith("#"):
                options[key.strip()] = value.strip()
        return options
    iterator = iter(argv)
    for argument in iterator:
        if argument.startswith("--"):
            key, has_value, value = argument[2:].partition("=")
            options[key.replace("-", "_")] = value if has_value else "1"
        elif argument in ("-o", "-a", "-n"):
            options[{"-o": "action", "-a": "ip", "-n": "plug"}[argument]] = next(iterator, "")
    return options


def _fail(message: str) -> int:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S,000')} ERROR: {message}", file=sys.stderr)
    return 1


def run(rack_root: Path, from_host: str, argv: list[str]) -> int:
    options = _options(argv)
    action = options.get("action", options.get("option", "reboot"))
    if action == "metadata":
        sys.stdout.write(METADATA.read_text() if METADATA.exists() else "")
        return 0
    outlet = f"{options.get('ip', '')}:{options.get('plug', options.get('port', ''))}"
    # What the PDU was asked, for whoever reads why a fence failed (the server's own log).
    with open(node.host_dir(rack_root, from_host) / "var/log/cluster/pdu.log", "a") as log:
        log.write(
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} {action} outlet {outlet} {sorted(options)}\n"
        )
    with Rack.open(rack_root, read_only=True) as rack:
        state = rack.state
        partner_pair = state["servers"][from_host]["pair"]
        host = next((h for h, s in state["servers"].items() if s.get("pdu_outlet") == outlet), None)
        if host is None:
            return _fail("Failed: Unable to obtain correct plug status or plug is not available")
        server = state["servers"][host]
        if not server.get("pdu_up", True) or not state["pairs"][partner_pair].get(
            "private_switch_up", True
        ):
            time.sleep(2)
            return _fail("Connection timed out")
    powered = node.init_pid(rack_root, host) is not None
    if action in ("monitor", "list"):
        return 0
    if action == "status":
        print(f"Status: {'ON' if powered else 'OFF'}")
        return 0 if powered else 2
    if action in ("off", "reboot"):
        _power_off(rack_root, host)
    if action in ("on", "reboot"):
        # From inside the BMC's own namespace: the PDU feeds the BMC, not its network (a pulled
        # cable leaves the BMC's own address reachable there).
        address = _bmc_address(rack_root, host)
        prefix = network.prefix_for(rack_root)
        done = subprocess.run(
            ["ip", "netns", "exec", f"{prefix}-{host}-bmc", "ipmitool", "-I", "lanplus", "-C",
             "3", "-H", address, "-U", bmc.USER, "-P", bmc.password(rack_root, host),
             "chassis", "power", "on"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if done.returncode != 0:
            return _fail(f"Failed: the server's power did not come back ({done.stderr.strip()})")
    if action not in ("on", "off", "reboot"):
        return _fail(f"Failed: action {action!r} is not supported by the virtual PDU")
    return 0


def _power_off(rack_root: Path, host: str) -> None:
    pid = node.init_pid(rack_root, host)
    if pid:
        os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        if node.init_pid(rack_root, host) is None:
            return
        time.sleep(0.1)


def _bmc_address(rack_root: Path, host: str) -> str:
    with Rack.open(rack_root, read_only=True) as rack:
        return rack.state["servers"][host]["bmc"]
