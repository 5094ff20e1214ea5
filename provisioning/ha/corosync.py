"""The Corosync layer under a pair's Pacemaker cluster: its corosync.conf, read and written.

We write the files `pcs cluster setup` writes instead of running it: pcs sets a cluster up
through pcsd (port 2224) on every node, which needs pcsd running and the `hacluster` user
authenticated on both servers (`pcs host auth`), one more daemon, password and open port on
each server. The appliance already reaches both servers with ansible, so it puts the same
corosync.conf and authkey there itself (provisioning/ansible/project/corosync.yml).

What `pcs cluster setup NAME n1 addr=A addr=B n2 addr=C addr=D` (pcs 0.11) writes, from its
source (pcs/lib/corosync/config_facade.py ``ConfigFacade.create``, pcs/lib/commands/cluster.py
``setup``): sections totem, nodelist, quorum, logging in that order; in totem ``version``,
``cluster_name``, ``transport`` and, for knet, ``crypto_cipher: aes256`` and
``crypto_hash: sha256``; each node's ``ringN_addr`` then ``name`` then ``nodeid`` numbered from 1
in the order given; ``two_node: 1`` for two nodes; logging to /var/log/cluster/corosync.log and
syslog with time stamps. Its writer indents by four spaces and leaves a blank line between
sections. We leave out the ``cluster_uuid`` newer pcs adds (a random value would make every run
a change) and never write ``interface`` sections (pcs writes none without link options).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from provisioning.ha.plan import PairPlan, read_plan

CONF_PATH = "/etc/corosync/corosync.conf"
AUTHKEY_PATH = "/etc/corosync/authkey"
# corosync-keygen and pcs both make a key of this many random bytes.
AUTHKEY_BYTES = 256
LOG_FILE = "/var/log/cluster/corosync.log"
# Shown when a server has no link addresses: Corosync then runs one link on its host name.
ONE_LINK_WARNING = "one heartbeat link: a single switch failure splits the pair"


def build_corosync_conf(plan: Mapping[str, Any] | PairPlan) -> str:
    """The pair's corosync.conf, as `pcs cluster setup` writes it.

    Node ids 1 and 2 follow the plan's server order, the order in which the CIB numbers its
    nodes (provisioning/ha/cib.py): Pacemaker names a node by its Corosync node id, so the two
    must agree.
    """
    pair = plan if isinstance(plan, PairPlan) else read_plan(plan)
    links = [server.link_addresses for server in pair.servers]
    if len({len(addresses) for addresses in links}) != 1:
        # knet needs every link on every node; pcs refuses this too.
        raise ValueError(
            f"{pair.servers[0].hostname} and {pair.servers[1].hostname} must both give "
            "mgmt_address and heartbeat_address, or neither"
        )
    nodes = []
    for nodeid, (server, addresses) in enumerate(zip(pair.servers, links, strict=True), 1):
        entries = [(f"ring{link}_addr", address) for link, address in enumerate(addresses)]
        nodes.append(_section("node", [*entries, ("name", server.hostname), ("nodeid", nodeid)]))
    sections = [
        _section(
            "totem",
            [
                ("version", 2),
                ("cluster_name", pair.cluster_name),
                ("transport", "knet"),
                ("crypto_cipher", "aes256"),
                ("crypto_hash", "sha256"),
            ],
        ),
        "nodelist {\n" + "\n".join(_indent(node) for node in nodes) + "}\n",
        _section("quorum", [("provider", "corosync_votequorum"), ("two_node", 1)]),
        _section(
            "logging",
            [
                ("to_logfile", "yes"),
                ("logfile", LOG_FILE),
                ("to_syslog", "yes"),
                ("timestamp", "on"),
            ],
        ),
    ]
    return "\n".join(sections)


def playbook_cluster(plan: Mapping[str, Any] | PairPlan) -> dict:
    """What corosync.yml gets for one pair (`ostara_corosync[pair]`): the file, the cluster's
    name and its nodes (for the refusal of a server of another cluster)."""
    pair = plan if isinstance(plan, PairPlan) else read_plan(plan)
    return {
        "conf": build_corosync_conf(pair),
        "cluster_name": pair.cluster_name,
        "nodes": list(pair.hostnames),
    }


def cluster_name(plan: Mapping[str, Any] | PairPlan) -> str:
    return (plan if isinstance(plan, PairPlan) else read_plan(plan)).cluster_name


def one_link_servers(plan: Mapping[str, Any]) -> list[str]:
    """The servers of a plan whose Corosync would run a single link (no addresses given)."""
    return [
        server["hostname"]
        for server in plan.get("servers", [])
        if not (server.get("mgmt_address") and server.get("heartbeat_address"))
    ]


def _section(name: str, options: list[tuple[str, object]]) -> str:
    return f"{name} {{\n" + "".join(f"    {key}: {value}\n" for key, value in options) + "}\n"


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" if line else "\n" for line in text.splitlines())


# -- reading an existing corosync.conf (the refusal of a server in another cluster) ---------

_LINE = re.compile(
    r"^\s*(?:(?P<open>[A-Za-z0-9_.-]+)\s*\{|(?P<close>\})|(?P<key>[A-Za-z0-9_.-]+)\s*:\s*(?P<value>.*?))\s*$"
)


def _parse(conf_text: str) -> list[tuple[tuple[str, ...], int, str, str]]:
    """(enclosing sections, number of the innermost section, key, value) of every option.

    Corosync's format: `name {` opens a section, `}` closes it, `key: value` sets an option,
    `#` starts a comment line. Other lines are skipped: only the cluster's name and nodes are
    wanted here, and corosync itself judges the file.
    """
    stack: list[tuple[str, int]] = []
    opened = 0
    found = []
    for line in conf_text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            continue
        if match["open"]:
            opened += 1
            stack.append((match["open"], opened))
        elif match["close"]:
            if stack:
                stack.pop()
        else:
            names = tuple(name for name, _ in stack)
            found.append((names, stack[-1][1] if stack else 0, match["key"], match["value"]))
    return found


def read_cluster_name(conf_text: str) -> str | None:
    """totem.cluster_name of a corosync.conf, or None when it has none."""
    for sections, _, key, value in _parse(conf_text):
        if sections == ("totem",) and key == "cluster_name":
            return value
    return None


def cluster_nodes(conf_text: str) -> list[str]:
    """The node names of a corosync.conf's nodelist (``name``, else ``ring0_addr``), in order."""
    nodes: dict[int, dict[str, str]] = {}
    for sections, number, key, value in _parse(conf_text):
        if sections == ("nodelist", "node"):
            nodes.setdefault(number, {}).setdefault(key, value)
    return [node.get("name") or node.get("ring0_addr", "?") for node in nodes.values()]
