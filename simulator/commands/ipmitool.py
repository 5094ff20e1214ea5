"""ipmitool: a server's BMC (chassis power, sdr, sensor).

`ipmitool -I lanplus -H <bmc address> -U user -P pass [-C 3] <command>` from the management
server (DIR/bin) reaches the BMC of the server whose spec has that `bmc` address, if that BMC
works and the network it sits on is up (the management network on a pair with two Corosync
links; on a one-link pair, the pair's private network); otherwise, like the real tool, it fails with
"Error: Unable to establish IPMI v2 / RMCP+ session" (exit 1). On a server without `-H` it
talks to its own BMC. Commands: `chassis power status|on|off|cycle|reset|soft`, `chassis
status`, `sdr [list|elist]`, `sensor [list]`, `mc info`. Powering a clustered server off or
cycling it is a node loss for its partner (which then fences it).

The BMC of a real-cluster server (simulator/realcluster) is a real one: `-H` with its address
runs the real `/usr/bin/ipmitool` with the same arguments, from the management network (the
rack's switch namespace), or from the asking real-cluster server's own network namespace.
"""

from __future__ import annotations

import getopt
import subprocess

from simulator import cluster, operations, topology
from simulator.commands import Context
from simulator.counter_store import host_counters

REAL_IPMITOOL = "/usr/bin/ipmitool"
SESSION_ERROR = "Error: Unable to establish IPMI v2 / RMCP+ session"
LOCAL_ERROR = (
    "Could not open device at /dev/ipmi0 or /dev/ipmi/0 or /dev/ipmidev/0: "
    "No such file or directory"
)


def _sensors(server: dict, util: float) -> list[tuple[str, float, str, tuple]]:
    """(name, value, unit, (lnr, lcr, lnc, unc, ucr, unr)) of one server's BMC.

    Readings as a 2-socket server reports them at rest (util 0) and busy (util 1): inlet air
    near 22 °C, CPUs 38 to 72 °C, DIMMs 30 to 52 °C, exhaust 30 to 48 °C, power supplies 28 to
    45 °C; thresholds as such BMCs print them. ``heat`` holds what an injected fault sets: the
    CPUs' temperature, or the inlet air's, which warms everything behind it.
    """
    on = server["power"] == "on"
    heat = server.get("heat", {})
    inlet = heat.get("inlet", 22.0)
    cpu = heat.get("cpu", 38.0 + 34.0 * util + inlet - 22.0)

    def reading(value: float) -> float:
        return value if on else 0.0

    return [
        ("Inlet Temp", reading(inlet), "degrees C", (None, -7.0, 3.0, 42.0, 47.0, None)),
        (
            "Exhaust Temp",
            reading(inlet + 8.0 + 18.0 * util),
            "degrees C",
            (None, None, None, 70.0, 75.0, None),
        ),
        ("CPU1 Temp", reading(cpu), "degrees C", (None, None, None, 88.0, 93.0, None)),
        ("CPU2 Temp", reading(cpu - 2.0), "degrees C", (None, None, None, 88.0, 93.0, None)),
        (
            "DIMM A1 Temp",
            reading(inlet + 8.0 + 22.0 * util),
            "degrees C",
            (None, None, None, 85.0, 95.0, None),
        ),
        (
            "PS1 Temperature",
            reading(inlet + 6.0 + 17.0 * util),
            "degrees C",
            (None, None, None, 65.0, 75.0, None),
        ),
        ("Fan1", reading(5400.0 + 3600.0 * util), "RPM", (None, 600.0, None, None, None, None)),
        ("Fan2", reading(5520.0 + 3600.0 * util), "RPM", (None, 600.0, None, None, None, None)),
        (
            "PSU1 Power",
            reading(260.0 + 380.0 * util),
            "Watts",
            (None, None, None, 900.0, 980.0, None),
        ),
        (
            "PSU2 Power",
            reading(250.0 + 370.0 * util),
            "Watts",
            (None, None, None, 900.0, 980.0, None),
        ),
    ]


def _status(value: float, limits: tuple, on: bool) -> str:
    if not on:
        return "ns"
    _lnr, lcr, lnc, unc, ucr, _unr = limits
    if (ucr is not None and value >= ucr) or (lcr is not None and value <= lcr):
        return "cr"
    if (unc is not None and value >= unc) or (lnc is not None and value <= lnc):
        return "nc"
    return "ok"


def _fmt(value: float | None) -> str:
    return "na" if value is None else f"{value:.3f}"


def run(ctx: Context, argv: list[str]) -> int:
    try:
        pairs, rest = getopt.getopt(argv, "I:H:U:P:f:EC:L:p:vNR:y:k:", [])
    except getopt.GetoptError as problem:
        ctx.error(f"ipmitool: {problem}")
        return 1
    options = dict(pairs)
    address = options.get("-H")
    if not rest:
        ctx.error("No command provided!")
        return 1
    if address and (namespace := _real_bmc(ctx, address)) is not None:
        return _ask_real_bmc(ctx, argv, namespace)
    reporting = rest[0] in ("sdr", "sensor", "mc") or rest in (
        ["chassis", "status"],
        ["chassis", "power", "status"],
    )
    with ctx.rack(check_host=False, read_only=reporting) as rack:
        state = rack.state
        if address:
            host = next((h for h, s in state["servers"].items() if s.get("bmc") == address), None)
            if host is None:
                ctx.error(SESSION_ERROR)
                return 1
            server = state["servers"][host]
            if not (server["bmc_up"] and topology.fence_network_up(state, server)):
                ctx.error(SESSION_ERROR)
                return 1
        else:
            if not ctx.host:
                ctx.error(LOCAL_ERROR)
                return 1
            host = ctx.host
            server = state["servers"][host]
            if server["state"] != "up" or not server["bmc_up"]:
                ctx.error(LOCAL_ERROR)
                return 1
        command = rest
        if command[:2] == ["chassis", "power"] and len(command) == 3:
            return _power(ctx, rack, host, command[2])
        if command[:2] == ["chassis", "power"]:
            ctx.error("chassis power Commands: status, on, off, cycle, reset, diag, soft")
            return 1
        if command == ["chassis", "status"]:
            on = server["power"] == "on"
            ctx.print(f"System Power         : {'on' if on else 'off'}")
            ctx.print("Power Overload       : false")
            ctx.print("Power Interlock      : inactive")
            ctx.print("Main Power Fault     : false")
            ctx.print("Power Control Fault  : false")
            ctx.print("Power Restore Policy : always-off")
            ctx.print("Last Power Event     : ")
            ctx.print("Chassis Intrusion    : inactive")
            ctx.print("Front-Panel Lockout  : inactive")
            ctx.print("Drive Fault          : false")
            ctx.print("Cooling/Fan Fault    : false")
            return 0
        if command[0] in ("sdr", "sensor") and (
            len(command) == 1 or command[1] in ("list", "elist")
        ):
            util = host_counters(rack.store, server)["util"] if server["state"] == "up" else 0.0
            on = server["power"] == "on"
            for name, value, unit, limits in _sensors(server, util):
                status = _status(value, limits, on)
                if command[0] == "sdr":
                    shown = f"{int(value)} {unit}" if on else "no reading"
                    ctx.print(f"{name:<16} | {shown:<17} | {status}")
                else:
                    cells = " | ".join(f"{_fmt(x):<10}" for x in limits)
                    ctx.print(
                        f"{name:<16} | {_fmt(value) if on else 'na':<10} | {unit:<10} | "
                        f"{status:<5} | {cells}"
                    )
            return 0
        if command == ["mc", "info"]:
            ctx.print("Device ID                 : 32")
            ctx.print("Firmware Revision         : 4.40")
            ctx.print("IPMI Version              : 2.0")
            ctx.print("Manufacturer Name         : Ostara virtual rack")
            return 0
    ctx.error(f"Invalid command: {' '.join(rest)}")
    return 1


def _real_bmc(ctx: Context, address: str) -> str | None:
    """The network namespace to ask from when `address` is the BMC of a real-cluster server
    (simulator/realcluster: an ipmi_sim that really answers): the asking server's own, if it
    is a real-cluster server (over its management cable), else the switch's (the management
    server's place on the management network). "" when the asking server is not running."""
    from simulator import realcluster  # the real cluster's modules open the rack themselves

    with ctx.rack(check_host=False, read_only=True) as rack:
        state = rack.state
        host = next((h for h, s in state["servers"].items() if s.get("bmc") == address), None)
        if host is None or not realcluster.is_real(state, state["servers"][host]["pair"]):
            return None
        asking = ctx.host if ctx.host in realcluster.real_hosts(state) else None
    prefix = realcluster.network.prefix_for(rack.root)
    if asking is None:
        return f"{prefix}-sw"
    return f"{prefix}-{asking}" if realcluster.node.init_pid(rack.root, asking) else ""


def _ask_real_bmc(ctx: Context, argv: list[str], namespace: str) -> int:
    """The real ipmitool, with the same arguments, output and exit code."""
    if not namespace:
        ctx.error(f"ssh: connect to host {ctx.host} port 22: No route to host")
        return 255
    command = ["ip", "netns", "exec", namespace, REAL_IPMITOOL, *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    ctx.out.write(done.stdout)
    ctx.err.write(done.stderr)
    return done.returncode


def _power(ctx: Context, rack, host: str, action: str) -> int:
    state = rack.state
    server = state["servers"][host]
    if action == "status":
        ctx.print(f"Chassis Power is {'on' if server['power'] == 'on' else 'off'}")
        return 0
    messages = {
        "on": "Up/On",
        "off": "Down/Off",
        "cycle": "Cycle",
        "reset": "Reset",
        "soft": "Soft",
    }
    if action not in messages:
        ctx.error("chassis power Commands: status, on, off, cycle, reset, diag, soft")
        return 1
    if action in ("off", "soft", "cycle", "reset") and server["power"] == "on":
        operations.power_off(state, host)
        cluster.reconcile(rack, server["pair"])
    if action in ("on", "cycle", "reset") and state["servers"][host]["state"] != "up":
        operations.power_on(state, host, rack.now)
        server["pacemaker"] = True
        cluster.reconcile(rack, server["pair"])
    rack.render(rack.state["pairs"][server["pair"]]["servers"])
    ctx.print(f"Chassis Power Control: {messages[action]}")
    return 0
