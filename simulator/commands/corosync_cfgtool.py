"""corosync-cfgtool: the heartbeat (Corosync knet link) status of a virtual server.

`corosync-cfgtool -s` prints, as Corosync 3 does with the knet transport, the local node id
and, for each link, its address and every node's state as seen from here (tab-indented):

    Local node ID 1, transport knet
    LINK ID 0 udp
        addr    = 10.30.0.11
        status:
                nodeid:   1:    localhost
                nodeid:   2:    connected

The pair's heartbeat runs on its private network (one link, id 0). The partner is
`connected` while both servers run the cluster stack, both heartbeat ports are up and the
private switch works; otherwise `disconnected`. Node ids are the servers' places in the pair
(1, 2); the link address is the heartbeat address, 10.30.0.<last byte of the public NID>.
On a server whose cluster stack is stopped (fenced and not restarted) it fails as the real
tool does when corosync is not running.
"""

from __future__ import annotations

from simulator.commands import Context

NOT_RUNNING = "Could not initialize corosync configuration API error 2"


def heartbeat_address(server: dict, node_id: int) -> str:
    nids = server.get("nids") or []
    last = nids[0].split("@", 1)[0].rsplit(".", 1)[-1] if nids else str(node_id)
    return f"10.30.0.{last}"


def connected(state: dict, host: str, peer: str) -> bool:
    pair = state["pairs"][state["servers"][host]["pair"]]
    return pair["private_switch_up"] and all(
        state["servers"][name]["state"] == "up"
        and state["servers"][name]["pacemaker"]
        and state["servers"][name]["heartbeat_up"]
        for name in (host, peer)
    )


def run(ctx: Context, argv: list[str]) -> int:
    if argv not in (["-s"], ["--status"]):
        ctx.error("usage: corosync-cfgtool -s")
        return 1
    with ctx.rack(read_only=True) as rack:
        state = rack.state
        server = state["servers"][ctx.host]
        if not server["pacemaker"]:
            ctx.error(NOT_RUNNING)
            return 1
        nodes = state["pairs"][server["pair"]]["servers"]
        local = nodes.index(ctx.host) + 1
        lines = [
            f"Local node ID {local}, transport knet",
            "LINK ID 0 udp",
            f"\taddr\t= {heartbeat_address(server, local)}",
            "\tstatus:",
        ]
        for node_id, name in enumerate(nodes, start=1):
            if name == ctx.host:
                word = "localhost"
            else:
                word = "connected" if connected(state, ctx.host, name) else "disconnected"
            lines.append(f"\t\tnodeid: {node_id:>3}:\t{word}")
        ctx.print("\n".join(lines))
    return 0
