"""fence_apc_snmp: the switched PDU's fence agent (ClusterLabs fence-agents), as the sensor runs
it for the second fencing level: `--action=status` (or `monitor`).

`fence_apc_snmp --ip=<PDU> --plug=<outlet> --username=U --password-script=S
--snmp-version=3 --snmp-sec-level=authPriv ... --action=status` (long options with `=` or a
separate value, or their short forms) answers from the rack: the server whose `pdu_outlet` is
`<PDU>:<outlet>` is found; its PDU must be up (`pdu-down` fails it) and, on a pair with one
Corosync link, its pair's private network up (`private-switch-down`; a two-link pair's PDUs
are on the management network), else the agent times out as the real one does when snmpget
gets no answer. An outlet no server is on is a plug the PDU does not have. Status prints
`Status: ON` (exit 0) or `Status: OFF` (exit 2, the server powered off); `monitor` prints
nothing and exits 0 when the PDU answers. A failure is logged to stderr as fencing.py logs it
(`<time> ERROR: Failed: ...`) with exit 1. The password scripts are not run: the virtual rack
keeps no PDU secrets. Fencing itself (off, on, reboot) is Pacemaker's, in simulator.cluster.
"""

from __future__ import annotations

import getopt
import time

from simulator import topology
from simulator.commands import Context

# fencing.py's own messages (fail(EC_TIMED_OUT), fail(EC_STATUS)).
TIMED_OUT = "Connection timed out"
NO_PLUG = "Failed: Unable to obtain correct plug status or plug is not available"
SHORT = "a:n:l:p:S:d:E:b:B:P:R:o:c:u:vq"
LONG = [
    "ip=",
    "plug=",
    "username=",
    "password=",
    "password-script=",
    "snmp-version=",
    "snmp-sec-level=",
    "snmp-auth-prot=",
    "snmp-priv-prot=",
    "snmp-priv-passwd=",
    "snmp-priv-passwd-script=",
    "community=",
    "ipport=",
    "action=",
    "verbose",
    "quiet",
]
ALIASES = {"-a": "--ip", "-n": "--plug", "-o": "--action"}


def _fail(ctx: Context, message: str) -> int:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S,000")
    ctx.error(f"{stamp} ERROR: {message}")
    return 1


def run(ctx: Context, argv: list[str]) -> int:
    try:
        pairs, rest = getopt.getopt(argv, SHORT, LONG)
    except getopt.GetoptError as problem:
        return _fail(ctx, f"Failed: {problem}")
    options = {ALIASES.get(name, name): value for name, value in pairs}
    if rest:
        return _fail(ctx, f"Failed: unexpected argument {rest[0]!r}")
    action = options.get("--action", "reboot")
    if "--ip" not in options or "--plug" not in options:
        return _fail(ctx, "Failed: You have to set the IP address and the plug (--ip, --plug)")
    if action not in ("status", "monitor"):
        return _fail(
            ctx, f"Failed: the virtual rack's agent only reads (status, monitor), not {action}"
        )
    with ctx.rack(check_host=False, read_only=True) as rack:
        state = rack.state
        outlet = f"{options['--ip']}:{options['--plug']}"
        on_pdu = [
            s
            for s in state["servers"].values()
            if (s.get("pdu_outlet") or ":").split(":")[0] == options["--ip"]
        ]
        if not on_pdu:
            return _fail(ctx, TIMED_OUT)  # no such PDU on the network
        server = next((s for s in on_pdu if s.get("pdu_outlet") == outlet), None)
        reachable = all(
            s["pdu_up"] and topology.fence_network_up(state, s)
            for s in ([server] if server else on_pdu[:1])
        )
        if not reachable:
            return _fail(ctx, TIMED_OUT)
        if action == "monitor":
            return 0
        if server is None:
            return _fail(ctx, NO_PLUG)
        on = server["power"] == "on"
        ctx.print(f"Status: {'ON' if on else 'OFF'}")
        return 0 if on else 2
