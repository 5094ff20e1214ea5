"""corosync-cfgtool: the heartbeat (Corosync knet link) status of a virtual server.

`corosync-cfgtool -s` prints, as Corosync 3 does with the knet transport, the local node id
and, for each link, its address and every node's state as seen from here (tab-indented):

    Local node ID 1, transport knet
    LINK ID 0 udp
        addr    = 10.30.0.11
        status:
                nodeid:          1:    localhost
                nodeid:          2:    connected

The pair's heartbeat runs on its private network (one link, id 0). The partner is
`connected` while both servers run the cluster stack, both heartbeat ports are up and the
private switch works; otherwise `disconnected`. Node ids are the servers' places in the pair
(1, 2); the link address is the heartbeat address, 10.30.0.<last byte of the public NID>.
On a server whose cluster stack is stopped (fenced and not restarted) it fails as the real
tool does when corosync is not running.

Once corosync.yml has written the server's /etc/corosync/corosync.conf, the links and their
addresses are the file's (ring0_addr: link 0 on the management network, ring1_addr: link 1 on
the private heartbeat network), one `LINK ID` block each, as Corosync 3.1 prints them. Link 0
is connected while both servers run the cluster stack; link 1 (the last link) follows the
private switch and heartbeat ports as above. A server racked with a `mgmt_address` and a
`heartbeat_address` but no written file (a rack built without the playbooks) shows those two
links the same way. `corosync-cfgtool -R` (reload the file) answers as Corosync does.
"""

from __future__ import annotations

from simulator import procfs, topology
from simulator.commands import Context

NOT_RUNNING = "Could not initialize corosync configuration API error 2"


def heartbeat_address(server: dict, node_id: int) -> str:
    nids = server.get("nids") or []
    last = nids[0].split("@", 1)[0].rsplit(".", 1)[-1] if nids else str(node_id)
    return f"10.30.0.{last}"


def connected(state: dict, host: str, peer: str) -> bool:
    return running(state, host, peer) and topology.heartbeat_link_up(state, host, peer)


def written_links(ctx: Context) -> tuple[list[str], dict[str, list[str]]] | None:
    """The node names and each node's link addresses of the server's corosync.conf, if any."""
    path = procfs.host_root(ctx.rack_root, ctx.host or "") / "etc/corosync/corosync.conf"
    if not path.is_file():
        return None
    names: list[str] = []
    links: dict[str, list[str]] = {}
    for line in path.read_text().split("node {")[1:]:
        options = dict(
            (key.strip(), value.strip())
            for key, _, value in (row.partition(":") for row in line.splitlines())
            if value
        )
        name = options.get("name") or options.get("ring0_addr", "")
        names.append(name)
        links[name] = [options[f"ring{n}_addr"] for n in range(8) if f"ring{n}_addr" in options]
    return names, links


def run(ctx: Context, argv: list[str]) -> int:
    if argv in (["-R"], ["--reload"]):
        with ctx.rack(read_only=True) as rack:
            if not rack.state["servers"][ctx.host]["pacemaker"]:
                ctx.error(NOT_RUNNING)
                return 1
        ctx.print("Reloading corosync.conf...\nDone")
        return 0
    if argv not in (["-s"], ["--status"]):
        ctx.error("usage: corosync-cfgtool -s | -R")
        return 1
    with ctx.rack(read_only=True) as rack:
        state = rack.state
        server = state["servers"][ctx.host]
        if not server["pacemaker"]:
            ctx.error(NOT_RUNNING)
            return 1
        nodes = state["pairs"][server["pair"]]["servers"]
        local = nodes.index(ctx.host) + 1
        written = written_links(ctx)
        if written and ctx.host in written[0]:
            nodes = written[0]
            local = nodes.index(ctx.host) + 1
            addresses = written[1][ctx.host]
        elif server.get("mgmt_address") and server.get("heartbeat_address"):
            # Built without corosync.yml (the fast path): the links its conf would have.
            addresses = [server["mgmt_address"], server["heartbeat_address"]]
        else:
            addresses = [heartbeat_address(server, local)]
        lines = [f"Local node ID {local}, transport knet"]
        for link, address in enumerate(addresses):
            lines += [f"LINK ID {link} udp", f"\taddr\t= {address}", "\tstatus:"]
            # With two links, link 0 is the management network: up while both servers are.
            private = link == len(addresses) - 1
            for node_id, name in enumerate(nodes, start=1):
                if name == ctx.host:
                    word = "localhost"
                elif private:
                    word = "connected" if connected(state, ctx.host, name) else "disconnected"
                else:
                    word = "connected" if running(state, ctx.host, name) else "disconnected"
                # CS_PRI_NODE_ID_PADDED: "%10" PRIu32 (corosync 3.1 tools/corosync-cfgtool.c)
                lines.append(f"\t\tnodeid: {node_id:>10}:\t{word}")
        ctx.print("\n".join(lines))
    return 0


def running(state: dict, host: str, peer: str) -> bool:
    return all(
        state["servers"][name]["state"] == "up" and state["servers"][name]["pacemaker"]
        for name in (host, peer)
    )
