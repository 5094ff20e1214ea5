"""lnetctl: LNet configuration and counters of a virtual server.

Subcommands: `lnet configure [--all]`, `lnet unconfigure`, `net show [--net N] [-v [N]]`,
`net add --net N --if IF`, `net del --net N`, `stats show`, `global show`, `ping NID`,
`--version`. Output is the YAML lnetctl prints (see the captures in
sensors/tests/fixtures/lustre/whamcloud-lustrefs-exporter/lnetctl.*); errors are lnetctl's
YAML error blocks on stderr with a non-zero exit. A server's NIDs are those of its spec; `net
add` brings up the NID the spec gives for that network; a pulled LNet link shows
`status: down`.
"""

from __future__ import annotations

import errno
import getopt

from simulator import topology
from simulator.commands import Context, strerror
from simulator.counter_store import host_counters


def _error(ctx: Context, verb: str, what: str, code: int, descr: str) -> int:
    ctx.error(f'{verb}:\n    - {what}:\n          errno: {-code}\n          descr: "{descr}"')
    return 256 - code if code < 256 else 1


def _net_of(nid: str) -> str:
    return nid.split("@", 1)[1]


def net_show(ctx: Context, server: dict, hc: dict | None, argv: list[str]) -> int:
    pairs, _rest = getopt.gnu_getopt(argv, "v", ["net=", "verbose"])
    options = dict(pairs)
    verbose = "-v" in options or "--verbose" in options
    only = options.get("--net")
    nids = list(server["lnet_nids"])
    if not nids:
        ctx.print("net:")
        return 0
    lines = [
        "net:",
        "    - net type: lo",
        "      local NI(s):",
        "        - nid: 0@lo",
        "          status: up",
    ]
    nets: dict[str, list[str]] = {}
    for nid in nids:
        nets.setdefault(_net_of(nid), []).append(nid)
    if only:
        if only not in nets:
            return _error(
                ctx, "show", "net", errno.ENOENT, f"cannot get networks: {strerror(errno.ENOENT)}"
            )
        lines = ["net:"]
        nets = {only: nets[only]}
    lnet = hc["lnet"] if hc else [0] * 11
    for net, members in nets.items():
        lines += [f"    - net type: {net}", "      local NI(s):"]
        for number, nid in enumerate(members):
            status = "up" if server["lnet_link_up"] else "down"
            lines += [
                f"        - nid: {nid}",
                f"          status: {status}",
                "          interfaces:",
                f"              0: ib{number}",
            ]
            if verbose:
                lines += [
                    "          statistics:",
                    f"              send_count: {lnet[3]}",
                    f"              recv_count: {lnet[4]}",
                    f"              drop_count: {lnet[6]}",
                    "          tunables:",
                    "              peer_timeout: 180",
                    "              peer_credits: 8",
                    "              peer_buffer_credits: 0",
                    "              credits: 256",
                    "          lnd tunables:",
                    "              peercredits_hiw: 4",
                    "              map_on_demand: 1",
                    "              concurrent_sends: 8",
                    "              fmr_pool_size: 512",
                    "              fmr_flush_trigger: 384",
                    "              fmr_cache: 1",
                    "              ntx: 512",
                    "              conns_per_peer: 1",
                    "          dev cpt: 0",
                    '          CPT: "[0,1]"',
                ]
    ctx.print("\n".join(lines))
    return 0


def stats_show(ctx: Context, hc: dict) -> int:
    lnet = hc["lnet"]
    ctx.print(
        "\n".join(
            [
                "statistics:",
                f"    msgs_alloc: {lnet[0]}",
                f"    msgs_max: {lnet[1]}",
                "    rst_alloc: 0",
                f"    errors: {lnet[2]}",
                f"    send_count: {lnet[3]}",
                "    resend_count: 0",
                "    response_timeout_count: 0",
                "    local_interrupt_count: 0",
                "    local_dropped_count: 0",
                "    local_aborted_count: 0",
                "    local_no_route_count: 0",
                "    local_timeout_count: 0",
                "    local_error_count: 0",
                "    remote_dropped_count: 0",
                "    remote_error_count: 0",
                "    remote_timeout_count: 0",
                "    network_timeout_count: 0",
                f"    recv_count: {lnet[4]}",
                f"    route_count: {lnet[5]}",
                f"    drop_count: {lnet[6]}",
                f"    send_length: {lnet[7]}",
                f"    recv_length: {lnet[8]}",
                f"    route_length: {lnet[9]}",
                f"    drop_length: {lnet[10]}",
            ]
        )
    )
    return 0


GLOBAL = """global:
    numa_range: 0
    max_intf: 200
    discovery: 1
    drop_asym_route: 0
    retry_count: 2
    transaction_timeout: 50
    health_sensitivity: 100
    recovery_interval: 1
    router_sensitivity: 100
    lnd_timeout: 16
    response_tracking: 3
    recovery_limit: 0
    max_recovery_ping_interval: 900"""


def run(ctx: Context, argv: list[str]) -> int:
    if not argv:
        ctx.error("lnetctl: interactive mode is not available on the virtual rack")
        return 1
    if argv[0] in ("--version", "-V"):
        ctx.print("lnetctl 2.15.4")
        return 0
    words = argv[:2]
    rest = argv[2:]
    reporting = words in (["net", "show"], ["stats", "show"], ["global", "show"]) or (
        argv[0] == "ping"
    )
    with ctx.rack(read_only=reporting) as rack:
        state = rack.state
        server = state["servers"][ctx.host]
        hc = host_counters(rack.store, server)
        if words == ["lnet", "configure"]:
            if "--all" in rest:
                server["lnet_nids"] = list(server["nids"])
            return 0
        if words == ["lnet", "unconfigure"]:
            if server["mounts"]:
                return _error(
                    ctx,
                    "unconfigure",
                    "lnet",
                    errno.EBUSY,
                    f"LNet unconfigure error: {strerror(errno.EBUSY)}",
                )
            server["lnet_nids"] = []
            return 0
        if words == ["net", "show"]:
            return net_show(ctx, server, hc, rest)
        if words == ["net", "add"]:
            pairs, _ = getopt.gnu_getopt(
                rest,
                "n:i:",
                ["net=", "if=", "ip2net=", "peer-timeout=", "peer-credits=", "credits=", "cpt="],
            )
            options = dict(pairs)
            net = options.get("--net") or options.get("-n")
            if not net or not (options.get("--if") or options.get("-i")):
                return _error(
                    ctx, "add", "net", errno.EINVAL, "cannot add network: Invalid argument"
                )
            wanted = [nid for nid in server["nids"] if _net_of(nid) == net]
            if not wanted:
                return _error(
                    ctx, "add", "net", errno.ENODEV, f"cannot add network: {strerror(errno.ENODEV)}"
                )
            if any(_net_of(nid) == net for nid in server["lnet_nids"]):
                return _error(
                    ctx, "add", "net", errno.EEXIST, f"cannot add network: {strerror(errno.EEXIST)}"
                )
            server["lnet_nids"] += wanted
            return 0
        if words == ["net", "del"]:
            pairs, _ = getopt.gnu_getopt(rest, "n:", ["net=", "if="])
            net = dict(pairs).get("--net") or dict(pairs).get("-n")
            if not any(_net_of(nid) == net for nid in server["lnet_nids"]):
                return _error(
                    ctx,
                    "del",
                    "net",
                    errno.ENOENT,
                    f"cannot delete network: {strerror(errno.ENOENT)}",
                )
            server["lnet_nids"] = [n for n in server["lnet_nids"] if _net_of(n) != net]
            return 0
        if words == ["stats", "show"]:
            return stats_show(ctx, hc)
        if words == ["global", "show"]:
            ctx.print(GLOBAL)
            return 0
        if argv[0] == "ping" and len(argv) > 1:
            nid = argv[1]
            peer = topology.server_of_nid(state, nid)
            if peer is None or not (
                topology.lnet_reachable(state, ctx.host) and topology.lnet_reachable(state, peer)
            ):
                return _error(
                    ctx, "manage", "ping", errno.EIO, f"failed to ping {nid}: {strerror(errno.EIO)}"
                )
            lines = [
                "ping:",
                f"    - primary nid: {nid}",
                "      Multi-Rail: True",
                "      peer ni:",
            ]
            for remote in state["servers"][peer]["lnet_nids"]:
                lines.append(f"        - nid: {remote}")
            ctx.print("\n".join(lines))
            return 0
    ctx.error(f"lnetctl: unknown command: {' '.join(argv)}")
    return 1
