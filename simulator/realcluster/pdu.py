"""The switched PDU's outlets for real-cluster servers: what the virtual `fence_apc_snmp` does.

Options as fenced passes them (`key=value` lines on stdin) or as the command line gives them
(`--action=off --ip=pdu1 --plug=3`, `-o metadata`). The server on outlet `<ip>:<plug>` loses
power at once on `off` (its processes die: `node.py`), and `on` asks its BMC (from the BMC's
own namespace: the PDU feeds the BMC, not its network) to power it on, as a server set to restore
power does; `reboot` restores power only once the server's `boot` has ended, and fails (exit 1,
a message) if the server's power did not come back. A PDU that is down (`pdu_up`), or a fencer
whose management cable is pulled (the PDU is on the management network), gets no answer:
"Connection timed out", exit 1, as the real agent reports a silent PDU.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from simulator.rack import Rack

from . import agents, bmc, network, node

METADATA = Path(agents.METADATA)
# How long the outlet waits for the server's boot to end (off) or to start again (on).
OFF_SECONDS = 20.0
ON_SECONDS = 30.0


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
    log_path = node.host_dir(rack_root, from_host) / "var/log/cluster/pdu.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a") as log:
        log.write(
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} {action} outlet {outlet} {sorted(options)}\n"
        )
    with Rack.open(rack_root, read_only=True) as rack:
        state = rack.state
        host = next((h for h, s in state["servers"].items() if s.get("pdu_outlet") == outlet), None)
        if host is None:
            return _fail("Failed: Unable to obtain correct plug status or plug is not available")
        answers = state["servers"][host].get("pdu_up", True)
        address = state["servers"][host]["bmc"]
    # The PDU is on the management network: a fencer whose management cable is pulled, or a
    # PDU that is down, gets no answer.
    reachable = network.link_is_up(network.prefix_for(rack_root), from_host, "mgmt")
    if not (answers and reachable):
        time.sleep(2)
        return _fail("Connection timed out")
    powered = _power(rack_root, host) == "on"
    if action in ("monitor", "list"):
        return 0
    if action == "status":
        print(f"Status: {'ON' if powered else 'OFF'}")
        return 0 if powered else 2
    if action not in ("on", "off", "reboot"):
        return _fail(f"Failed: action {action!r} is not supported by the virtual PDU")
    if action in ("off", "reboot") and not _power_off(rack_root, host, address):
        return _fail("Failed: the server's power did not go off")
    if action in ("on", "reboot") and not _power_on(rack_root, host, address):
        return _fail("Failed: the server's power did not come back")
    return 0


# The agent runs inside the fencing server's namespaces, where the other server's processes
# are out of sight: the outlet's power acts through the BMC it feeds (from the BMC's own
# namespace: the PDU feeds the BMC, not its network), and the rack tells when the server's
# `boot` has ended or started (it writes the server off as it ends, up as it starts).


def _power(rack_root: Path, host: str) -> str:
    with Rack.open(rack_root, read_only=True) as rack:
        return rack.state["servers"][host]["power"]


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _power_off(rack_root: Path, host: str, address: str) -> bool:
    bmc.local_ipmitool(rack_root, host, address, "chassis", "power", "off")
    return _wait(lambda: _power(rack_root, host) == "off", OFF_SECONDS)


def _power_on(rack_root: Path, host: str, address: str) -> bool:
    """Power restored; only once the last boot has ended (else the BMC, which still counts
    the server on, would ignore it)."""

    def _bmc_says_off() -> bool:
        done = bmc.local_ipmitool(rack_root, host, address, "chassis", "power", "status")
        return "is off" in done.stdout

    if _power(rack_root, host) == "on":
        return True
    _wait(_bmc_says_off, min(5.0, ON_SECONDS))
    bmc.local_ipmitool(rack_root, host, address, "chassis", "power", "on")
    return _wait(lambda: _power(rack_root, host) == "on", ON_SECONDS)
