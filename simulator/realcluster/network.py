"""The wires of a real-cluster pair: network namespaces, a switch, veth cables.

Each rack with real clusters has one switch namespace (`<prefix>-sw`) holding two bridges: the
management network (`mgmt`) and the private heartbeat network (`hb`). Each server of a real pair
has its own network namespace (`<prefix>-<host>`) with two NICs, `mgmt0` and `hb0`, cabled to
those bridges, and its BMC has its own (`<prefix>-<host>-bmc`) on the management network. The
addresses are the spec's `mgmt_address`, `heartbeat_address` and `bmc`: link-local
(169.254.0.0/16) only, in /24s so that the two networks do not overlap. Nothing here touches
the machine's own network namespace; every namespace is named after the rack's directory, so
two racks (the demo and a test) never share one.

Pulling a cable is `set_link(prefix, host, "hb", up=False)`: the switch's end of the veth goes
down, as a pulled cable or a dead switch port looks to the server.
"""

from __future__ import annotations

import hashlib
import ipaddress
import subprocess
from pathlib import Path

from simulator.state import RackError

LINK_LOCAL = ipaddress.ip_network("169.254.0.0/16")
NETWORKS = ("mgmt", "hb")
# The switch's address on the management network: what the management server's tools use.
SWITCH_ADDRESS = "169.254.1.254"


class NetworkError(RackError):
    """A wire that cannot be made, or an address a real-cluster pair cannot use."""


def prefix_for(rack_root: Path) -> str:
    """`ost<6 hex>`: short enough for interface names (15 characters) built on it."""
    digest = hashlib.sha1(str(Path(rack_root).resolve()).encode()).hexdigest()[:6]
    return f"ost{digest}"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise NetworkError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def namespaces() -> set[str]:
    done = _ip("netns", "list", check=False)
    return {line.split()[0] for line in done.stdout.splitlines() if line.strip()}


def link_local(address: str, field: str) -> str:
    """The address if it is link-local IPv4, else NetworkError naming the field: a real-cluster
    pair never puts a routable address on a wire, even inside its namespaces."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise NetworkError(f"{field}: {address!r} is not an IP address") from None
    if parsed not in LINK_LOCAL:
        raise NetworkError(
            f"{field}: {address} is not link-local (169.254.x.y); a real-cluster pair on the "
            "virtual rack only uses link-local addresses"
        )
    return address


def _links(namespace: str) -> set[str]:
    done = _ip("-n", namespace, "-o", "link", "show", check=False)
    return {line.split(":")[1].strip().split("@")[0] for line in done.stdout.splitlines()}


def ensure_switch(prefix: str) -> str:
    """The rack's switch; one a failed start left half-made is finished (each step is only
    taken if its result is missing)."""
    switch = f"{prefix}-sw"
    if switch not in namespaces():
        _ip("netns", "add", switch)
    _ip("-n", switch, "link", "set", "lo", "up")
    links = _links(switch)
    for network in NETWORKS:
        if network not in links:
            _ip("-n", switch, "link", "add", network, "type", "bridge")
        _ip("-n", switch, "link", "set", network, "up")
    _ip("-n", switch, "addr", "replace", f"{SWITCH_ADDRESS}/24", "dev", "mgmt")
    return switch


def _cable(prefix: str, namespace: str, nic: str, network: str, port: str, address: str) -> None:
    """A NIC cabled to the switch; a cable a failed start left half-made is finished. A port
    that exists keeps its state (a pulled cable stays pulled: `set_link`)."""
    switch = f"{prefix}-sw"
    if nic not in _links(namespace):
        _ip("-n", switch, "link", "del", port, check=False)  # a veth's end left alone
        _ip("link", "add", nic, "netns", namespace, "type", "veth", "peer", "name", port,
            "netns", switch)  # fmt: skip
        _ip("-n", switch, "link", "set", port, "up")
    _ip("-n", switch, "link", "set", port, "master", network)
    _ip("-n", namespace, "addr", "replace", f"{address}/24", "dev", nic)
    _ip("-n", namespace, "link", "set", nic, "up")


def _port(host: str, nic: str) -> str:
    # The switch's end of a cable: interface names are at most 15 characters.
    return f"{nic[:1]}{hashlib.sha1(host.encode()).hexdigest()[:8]}{nic[-1:]}"


def _new_namespace(prefix: str, namespace: str) -> None:
    """The namespace (loopback up) on the rack's switch."""
    ensure_switch(prefix)
    if namespace not in namespaces():
        _ip("netns", "add", namespace)
    _ip("-n", namespace, "link", "set", "lo", "up")


def ensure_server(prefix: str, host: str, mgmt: str, heartbeat: str) -> str:
    """The server's namespace with its two NICs (kept while it is powered off, as a server's
    NICs are; what a failed start left out is added)."""
    namespace = f"{prefix}-{host}"
    _new_namespace(prefix, namespace)
    _cable(prefix, namespace, "mgmt0", "mgmt", _port(host, "m0"), mgmt)
    _cable(prefix, namespace, "hb0", "hb", _port(host, "h0"), heartbeat)
    return namespace


def ensure_bmc(prefix: str, host: str, address: str) -> str:
    namespace = f"{prefix}-{host}-bmc"
    _new_namespace(prefix, namespace)
    _cable(prefix, namespace, "lan0", "mgmt", _port(host, "b0"), address)
    return namespace


# A server's cables by what they connect -> the switch port's tag (`_port`).
_NICS = {"mgmt": "m0", "hb": "h0", "bmc": "b0"}


def set_link(prefix: str, host: str, which: str, up: bool) -> None:
    """Pull (up=False) or plug back a cable: `which` is mgmt, hb or bmc."""
    _ip("-n", f"{prefix}-sw", "link", "set", _port(host, _NICS[which]), "up" if up else "down")


def link_is_up(prefix: str, host: str, which: str) -> bool:
    """Whether the cable is in (its switch port up); False for a cable never made."""
    done = _ip("-n", f"{prefix}-sw", "-o", "link", "show", _port(host, _NICS[which]), check=False)
    flags = done.stdout.partition("<")[2].partition(">")[0].split(",")
    return done.returncode == 0 and "UP" in flags


def remove(prefix: str) -> None:
    """Every namespace of the rack (the veths go with them)."""
    for namespace in sorted(namespaces()):
        if namespace.startswith(f"{prefix}-"):
            _ip("netns", "del", namespace, check=False)
