"""Reading a server pair's plan for the HA builder.

The planner's plan is a plain dict (JSON); this module checks the few fields the Pacemaker
configuration needs and turns them into small typed records. Every name that ends up in a
Pacemaker id, a resource parameter or a shell command is checked against a strict pattern here,
so the builders never quote or escape anything.

A pair without a complete fencing path (BMC and PDU outlet on both servers) is refused: a node
that cannot be fenced is never assumed dead, so such a cluster could not fail over at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from provisioning import names
from provisioning.server import Server

DEVICE_RE = re.compile(r"^/dev/[A-Za-z0-9_.+:/-]+$")
MOUNTPOINT_RE = re.compile(r"^/[A-Za-z0-9_.+/-]+$")

# Network interface the healthLNET agent checks when the plan names none: LNet networks are
# conventionally on the first port of their kind.
DEFAULT_LNET_INTERFACE = {"o2ib": "ib0", "tcp": "eth0"}

TARGET_KINDS = ("MGT", "MDT", "OST")

# Ways a plan could ask for a cluster without fencing; all are refused.
FENCING_SWITCHES = ("fencing", "stonith_enabled", "stonith-enabled")


class HAConfigError(ValueError):
    """The plan cannot become a safe Pacemaker configuration. `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Target:
    label: str
    kind: str
    device: str
    mountpoint: str
    primary: str
    failover: str


@dataclass(frozen=True)
class PairPlan:
    filesystem: str
    pair: str
    role: str
    servers: tuple[Server, Server]
    targets: tuple[Target, ...]

    @property
    def hostnames(self) -> tuple[str, str]:
        return (self.servers[0].hostname, self.servers[1].hostname)

    @property
    def lnet_interface(self) -> str:
        return self.servers[0].lnet_interface

    @property
    def nids(self) -> tuple[str, ...]:
        return tuple(nid for server in self.servers for nid in server.nids)

    @property
    def cluster_name(self) -> str:
        return f"{self.filesystem}-{self.pair}-{self.role}"


def _require(mapping: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(mapping, Mapping):
        raise HAConfigError(where, "must be an object")
    if key not in mapping or mapping[key] in (None, ""):
        raise HAConfigError(f"{where}.{key}", "is missing")
    return mapping[key]


def _string(
    mapping: Mapping[str, Any], key: str, where: str, pattern: re.Pattern[str], what: str
) -> str:
    value = _require(mapping, key, where)
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise HAConfigError(f"{where}.{key}", f"{value!r} is not {what}")
    return value


def _named(
    mapping: Mapping[str, Any], key: str, where: str, problem: Callable[[str], str | None]
) -> str:
    """A name checked by the shared rules of provisioning.names."""
    value = _require(mapping, key, where)
    if not isinstance(value, str):
        raise HAConfigError(f"{where}.{key}", f"{value!r} is not text")
    if message := problem(value):
        raise HAConfigError(f"{where}.{key}", message)
    return value


def _bmc_address(server: Mapping[str, Any], where: str) -> str:
    value = server.get("bmc") if isinstance(server, Mapping) else None
    if value in (None, ""):
        raise HAConfigError(
            f"{where}.bmc",
            f"server {server.get('hostname', '?')} has no BMC address: without its first fence "
            "device Pacemaker cannot fence it, and a node that cannot be fenced is never "
            "assumed dead",
        )
    if not isinstance(value, str):
        raise HAConfigError(f"{where}.bmc", f"{value!r} is not an address")
    if problem := names.bmc_problem(value):
        raise HAConfigError(f"{where}.bmc", problem)
    return value


def _pdu_outlet(server: Mapping[str, Any], where: str) -> str:
    value = server.get("pdu_outlet")
    if value in (None, ""):
        raise HAConfigError(
            f"{where}.pdu_outlet",
            f"server {server.get('hostname', '?')} has no PDU outlet: the design needs a second "
            "fence device (the switched PDU) in case the BMC is down",
        )
    if not isinstance(value, str):
        raise HAConfigError(f"{where}.pdu_outlet", f"{value!r} is not of the form 'pdu1:3'")
    if problem := names.pdu_outlet_problem(value):
        raise HAConfigError(f"{where}.pdu_outlet", problem)
    return value


def _nids(server: Mapping[str, Any], where: str) -> tuple[str, ...]:
    nids = _require(server, "nids", where)
    if not isinstance(nids, Sequence) or isinstance(nids, str) or not nids:
        raise HAConfigError(f"{where}.nids", "must be a non-empty list of NIDs")
    for nid in nids:
        problem = names.nid_problem(nid) if isinstance(nid, str) else f"{nid!r} is not text"
        if problem:
            raise HAConfigError(f"{where}.nids", problem)
    return tuple(nids)


def _lnet_interface(server: Mapping[str, Any], nids: tuple[str, ...], where: str) -> str:
    value = server.get("lnet_interface")
    if value not in (None, ""):
        if not isinstance(value, str) or names.interface_problem(value):
            raise HAConfigError(f"{where}.lnet_interface", f"{value!r} is not an interface name")
        return value
    lnd = names.nid_lnd(nids[0])
    if lnd not in DEFAULT_LNET_INTERFACE:
        raise HAConfigError(
            f"{where}.lnet_interface",
            f"no default interface for LNet network type {lnd!r}; name it in the plan",
        )
    return DEFAULT_LNET_INTERFACE[lnd]


def _server(raw: Any, where: str) -> Server:
    if not isinstance(raw, Mapping):
        raise HAConfigError(where, "must be an object")
    hostname = _named(raw, "hostname", where, names.hostname_problem)
    nids = _nids(raw, where)
    bmc = _bmc_address(raw, where)
    return Server(
        hostname=hostname,
        nids=nids,
        bmc=bmc,
        pdu_outlet=_pdu_outlet(raw, where),
        lnet_interface=_lnet_interface(raw, nids, where),
        mgmt_address=_link_address(raw, "mgmt_address", where),
        heartbeat_address=_link_address(raw, "heartbeat_address", where),
    )


def _link_address(server: Mapping[str, Any], key: str, where: str) -> str | None:
    """A Corosync link address, when the plan gives one (it is optional)."""
    value = server.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise HAConfigError(f"{where}.{key}", f"{value!r} is not an IP address")
    if problem := names.link_address_problem(value):
        raise HAConfigError(f"{where}.{key}", problem)
    return value


def _target(raw: Any, where: str, filesystem: str, hostnames: tuple[str, str]) -> Target:
    if not isinstance(raw, Mapping):
        raise HAConfigError(where, "must be an object")
    kind = _require(raw, "kind", where)
    if kind not in TARGET_KINDS:
        raise HAConfigError(f"{where}.kind", f"{kind!r} is not one of {', '.join(TARGET_KINDS)}")
    label = _named(
        raw, "label", where, lambda value: names.target_label_problem(value, kind, filesystem)
    )
    device = _string(raw, "device", where, DEVICE_RE, "a block device path under /dev")
    mountpoint = _string(raw, "mountpoint", where, MOUNTPOINT_RE, "an absolute mount point")
    primary = _require(raw, "primary", where)
    failover = _require(raw, "failover", where)
    for key, value in (("primary", primary), ("failover", failover)):
        if value not in hostnames:
            raise HAConfigError(f"{where}.{key}", f"{value!r} is not a server of this pair")
    if primary == failover:
        raise HAConfigError(f"{where}.failover", "must be the other server of the pair")
    return Target(label, kind, device, mountpoint, primary, failover)


def read_plan(plan: Mapping[str, Any]) -> PairPlan:
    """Check a planner plan and return what the HA builders need; raise HAConfigError."""
    if not isinstance(plan, Mapping):
        raise HAConfigError("plan", "must be an object")
    for switch in FENCING_SWITCHES:
        if switch in plan and plan[switch] is not True:
            raise HAConfigError(
                f"plan.{switch}",
                "fencing cannot be turned off: without it a lost server is never assumed dead, "
                "so its targets would never fail over",
            )
    filesystem = _named(plan, "filesystem", "plan", names.filesystem_problem)
    pair = _named(plan, "ssu", "plan", names.unit_name_problem)
    role = _require(plan, "role", "plan")
    if role not in ("oss", "mds"):
        raise HAConfigError("plan.role", f"{role!r} is not 'oss' or 'mds'")

    raw_servers = _require(plan, "servers", "plan")
    if not isinstance(raw_servers, Sequence) or len(raw_servers) != 2:
        raise HAConfigError("plan.servers", "a Pacemaker pair has exactly two servers")
    first = _server(raw_servers[0], "servers[0]")
    second = _server(raw_servers[1], "servers[1]")
    if first.hostname == second.hostname:
        raise HAConfigError("servers[1].hostname", "both servers have the same host name")
    if first.lnet_interface != second.lnet_interface:
        # healthLNET is one clone with one 'device' parameter for both nodes.
        raise HAConfigError(
            "servers[1].lnet_interface",
            f"{second.lnet_interface!r} differs from {first.lnet_interface!r}: the healthLNET "
            "agent checks the same interface on both servers",
        )
    hostnames = (first.hostname, second.hostname)

    raw_targets = _require(plan, "targets", "plan")
    if not isinstance(raw_targets, Sequence) or isinstance(raw_targets, str) or not raw_targets:
        raise HAConfigError("plan.targets", "must be a non-empty list")
    targets = tuple(
        _target(raw, f"targets[{number}]", filesystem, hostnames)
        for number, raw in enumerate(raw_targets)
    )
    seen: dict[str, str] = {}
    for number, target in enumerate(targets):
        for field, value in (
            ("label", target.label),
            ("device", target.device),
            ("mountpoint", target.mountpoint),
        ):
            key = f"{field}={value}"
            if key in seen:
                raise HAConfigError(f"targets[{number}].{field}", f"{value!r} is used twice")
            seen[key] = field
    kinds = {target.kind for target in targets}
    if role == "oss" and kinds != {"OST"}:
        raise HAConfigError("plan.targets", "an OSS pair serves OSTs only")
    if role == "mds" and "OST" in kinds:
        raise HAConfigError("plan.targets", "an MDS pair serves no OSTs")
    return PairPlan(filesystem, pair, role, (first, second), targets)
