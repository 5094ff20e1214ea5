"""What a server pair's Pacemaker cluster consists of, independent of how it is written down.

`pair_cluster()` turns a checked plan into plain records (fence devices, target resources,
health clones, constraints, fencing levels). `cib.py` writes them as CIB XML and `pcs.py` as a
pcs script, so the two cannot drift apart by construction; a test still proves they agree.

The recipe is DESIGN.md §2 "The Pacemaker recipe for a Lustre server pair".
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from provisioning import names
from provisioning.ha.plan import HAConfigError, PairPlan, Target
from provisioning.server import Server

CLUSTER_PROPERTIES = (("stonith-enabled", "true"), ("no-quorum-policy", "ignore"))
# Failback is an operator's act: stickiness (1000) outweighs any location preference (20).
RESOURCE_DEFAULTS = (
    ("resource-stickiness", "1000"),
    ("migration-threshold", "3"),
    ("failure-timeout", "20m"),
)

# Node attributes written by the Lustre health agents (lustre-release, lustre/conf/resource/
# healthLNET and healthLUSTRE, parameter `name`, defaults "pingd" and "lustred").
LNET_ATTRIBUTE = "pingd"
LUSTRE_ATTRIBUTE = "lustred"
# healthLNET writes multiplier × (NIDs answering `lctl ping`); 1001 as in the Lustre examples,
# so that one reachable NID already outweighs the stickiness if the value is ever used as a score.
LNET_MULTIPLIER = 1001

LOCATION_SCORE_PRIMARY = 20
LOCATION_SCORE_FAILOVER = 10
# The MDT starts where the MGS is (active/passive MDS pair), but this is advice, not a tie: it
# is below the stickiness, so an MGS that moves or fails does not drag a running MDT along.
MDT_WITH_MGS_SCORE = 500
# In a split of the heartbeat link both servers shoot; delaying the shots at the first server
# lets it win the race, instead of both servers powering each other off.
FENCE_DELAY_FIRST_SERVER = "10s"

# Installed on both servers from provisioning/ha/fence-secret; prints one secret kept
# root-only in SECRET_DIR.
SECRET_SCRIPT = "/usr/libexec/ostara/fence-secret"
SECRET_DIR = "/etc/ostara/fence"
USERNAME_RE = names.FENCE_USER
SCRIPT_PATH_RE = re.compile(r"^/[A-Za-z0-9_./-]+$")


@dataclass(frozen=True)
class FenceCredentials:
    """Who the fence agents log in as, and the script that hands them each secret.

    There is deliberately no password field: the agents run `password_script`, which prints the
    secret from a root-only file on the server, so no secret is ever in the CIB.
    """

    ipmi_username: str = "ostara-fence"
    pdu_username: str = "ostara-fence"
    secret_script: str = SECRET_SCRIPT

    @classmethod
    def from_option(cls, value: Any) -> FenceCredentials:
        if value is None:
            return cls()
        if isinstance(value, cls):
            credentials = value
        elif isinstance(value, Mapping):
            for key in value:
                if any(word in str(key).lower() for word in ("pass", "secret", "community", "key")):
                    if key != "secret_script":
                        raise HAConfigError(
                            f"fence_credentials.{key}",
                            "secrets never go into the cluster configuration; store them on the "
                            f"servers for {SECRET_SCRIPT} (see provisioning/ha/README.md)",
                        )
            unknown = set(value) - {"ipmi_username", "pdu_username", "secret_script"}
            if unknown:
                raise HAConfigError(f"fence_credentials.{sorted(unknown)[0]}", "unknown field")
            credentials = cls(**value)
        else:
            raise HAConfigError(
                "fence_credentials",
                "must name the fence user names (fencing cannot be turned off)",
            )
        for field in ("ipmi_username", "pdu_username"):
            if not USERNAME_RE.fullmatch(getattr(credentials, field)):
                raise HAConfigError(f"fence_credentials.{field}", "is not a valid user name")
        if not SCRIPT_PATH_RE.fullmatch(credentials.secret_script):
            raise HAConfigError("fence_credentials.secret_script", "is not an absolute path")
        return credentials

    def script_for(self, secret_name: str) -> str:
        """The password_script value: the fence agent runs it through the shell."""
        return f"{self.secret_script} {secret_name}"


@dataclass(frozen=True)
class Op:
    name: str
    interval: str
    timeout: str | None = None


@dataclass(frozen=True)
class Primitive:
    id: str
    standard: str  # "ocf" or "stonith"
    provider: str | None
    agent: str
    params: tuple[tuple[str, str], ...]
    ops: tuple[Op, ...]


@dataclass(frozen=True)
class Clone:
    id: str
    primitive: Primitive


@dataclass(frozen=True)
class NodeScore:
    id: str
    resource: str
    node: str
    score: str


@dataclass(frozen=True)
class HealthRule:
    """-INFINITY for a resource on any node where one of these attributes is unset or <= 0."""

    id: str
    resource: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class Order:
    id: str
    first: str
    then: str
    kind: str


@dataclass(frozen=True)
class Colocation:
    id: str
    resource: str
    with_resource: str
    score: str


@dataclass(frozen=True)
class FencingLevel:
    id: str
    node: str
    index: int
    device: str


@dataclass(frozen=True)
class PairCluster:
    name: str
    nodes: tuple[str, str]
    properties: tuple[tuple[str, str], ...]
    resource_defaults: tuple[tuple[str, str], ...]
    fence_devices: tuple[Primitive, ...]
    targets: tuple[Primitive, ...]
    health_clones: tuple[Clone, ...]
    node_scores: tuple[NodeScore, ...]
    health_rules: tuple[HealthRule, ...]
    orders: tuple[Order, ...]
    colocations: tuple[Colocation, ...]
    fencing_levels: tuple[FencingLevel, ...]


def ipmi_device_id(hostname: str) -> str:
    return f"fence-{hostname}-ipmi"


def pdu_device_id(hostname: str) -> str:
    return f"fence-{hostname}-pdu"


def bmc_secret_name(server: Server) -> str:
    return f"bmc-{server.hostname}"


def pdu_secret_names(server: Server) -> tuple[str, str]:
    """SNMPv3 authentication and privacy pass phrases belong to the PDU, not to the server."""
    return (f"pdu-{server.pdu}-auth", f"pdu-{server.pdu}-priv")


def _fence_devices(
    server: Server, credentials: FenceCredentials, delay: str | None
) -> tuple[Primitive, Primitive]:
    monitor = (Op("monitor", "60s"),)
    delay_params = (("pcmk_delay_base", delay),) if delay else ()
    ipmi = Primitive(
        id=ipmi_device_id(server.hostname),
        standard="stonith",
        provider=None,
        agent="fence_ipmilan",
        params=(
            ("ip", server.bmc),
            ("lanplus", "1"),
            # Cipher suite 3 (AES, SHA1 HMAC): encrypted, and spares ipmitool its slow probing.
            ("cipher", "3"),
            ("username", credentials.ipmi_username),
            ("password_script", credentials.script_for(bmc_secret_name(server))),
            ("pcmk_host_list", server.hostname),
            *delay_params,
        ),
        ops=monitor,
    )
    auth_secret, priv_secret = pdu_secret_names(server)
    pdu = Primitive(
        id=pdu_device_id(server.hostname),
        standard="stonith",
        provider=None,
        agent="fence_apc_snmp",
        params=(
            ("ip", server.pdu),
            ("plug", str(server.outlet)),
            # Without this Pacemaker would also pass port=<node name>, which the agent reads
            # as the outlet too; with it Pacemaker keeps our plug.
            ("pcmk_host_argument", "plug"),
            # SNMPv3 with authentication and privacy: v1/v2c would need the community string,
            # itself a secret, as a plain parameter.
            ("snmp_version", "3"),
            ("snmp_sec_level", "authPriv"),
            ("snmp_auth_prot", "SHA"),
            ("snmp_priv_prot", "AES"),
            ("username", credentials.pdu_username),
            ("password_script", credentials.script_for(auth_secret)),
            ("snmp_priv_passwd_script", credentials.script_for(priv_secret)),
            ("pcmk_host_list", server.hostname),
            *delay_params,
        ),
        ops=monitor,
    )
    return ipmi, pdu


def status_argv(device: Primitive) -> list[str]:
    """The fence agent's own ``status`` of a device, with the device's parameters as the
    agent's options (``password_script`` -> ``--password-script=...``): each option and its
    value are one argument, so no value can be read as an option. Pacemaker's own parameters
    (``pcmk_*``) are not the agent's."""
    options = [
        f"--{name.replace('_', '-')}={value}"
        for name, value in device.params
        if not name.startswith("pcmk_")
    ]
    return [device.agent, *options, "--action=status"]


def pdu_status_commands(plan: PairPlan, fence_credentials: Any = None) -> dict[str, str]:
    """Hostname -> the shell words that read its PDU outlet with the same agent, user and
    secret scripts as the pair's fence device: what its partner's sensor polls each round
    (sensors.redundancy, ``[partner] pdu_command``)."""
    credentials = FenceCredentials.from_option(fence_credentials)
    commands = {}
    for server in plan.servers:
        if problem := names.pdu_outlet_problem(server.pdu_outlet):
            raise HAConfigError(f"{server.hostname}.pdu_outlet", problem)
        _, pdu = _fence_devices(server, credentials, None)
        commands[server.hostname] = shlex.join(status_argv(pdu))
    return commands


def _target_resource(target: Target) -> Primitive:
    return Primitive(
        id=target.label,
        standard="ocf",
        provider="lustre",
        agent="Lustre",
        params=(("target", target.device), ("mountpoint", target.mountpoint)),
        ops=(
            Op("start", "0s", "300s"),
            Op("stop", "0s", "300s"),
            # Timeout as the agent's own metadata advertises.
            Op("monitor", "20s", "300s"),
        ),
    )


def _health_clones(plan: PairPlan) -> tuple[Clone, Clone]:
    # Each server pings every NID of the pair, itself included: if only the partner were
    # listed, the survivor of a node loss would score 0 and refuse to take the targets.
    lnet = Primitive(
        id="healthLNET",
        standard="ocf",
        provider="lustre",
        agent="healthLNET",
        params=(
            ("lctl", "true"),
            ("multiplier", str(LNET_MULTIPLIER)),
            ("device", plan.lnet_interface),
            ("host_list", " ".join(plan.nids)),
            ("name", LNET_ATTRIBUTE),
        ),
        ops=(Op("start", "0s", "300s"), Op("stop", "0s", "300s"), Op("monitor", "20s", "300s")),
    )
    lustre = Primitive(
        id="healthLUSTRE",
        standard="ocf",
        provider="lustre",
        agent="healthLUSTRE",
        params=(("name", LUSTRE_ATTRIBUTE),),
        ops=(Op("start", "0s", "60s"), Op("stop", "0s", "20s"), Op("monitor", "10s", "60s")),
    )
    return Clone("healthLNET-clone", lnet), Clone("healthLUSTRE-clone", lustre)


def pair_cluster(plan: PairPlan, fence_credentials: Any = None) -> PairCluster:
    """The whole cluster of one server pair, following DESIGN.md's Pacemaker recipe."""
    if fence_credentials is False:
        raise HAConfigError("fence_credentials", "fencing cannot be turned off")
    credentials = FenceCredentials.from_option(fence_credentials)
    first, second = plan.servers

    fence_devices: list[Primitive] = []
    node_scores: list[NodeScore] = []
    fencing_levels: list[FencingLevel] = []
    for server in plan.servers:
        delay = FENCE_DELAY_FIRST_SERVER if server is first else None
        ipmi, pdu = _fence_devices(server, credentials, delay)
        fence_devices += [ipmi, pdu]
        for device in (ipmi, pdu):
            # A server never runs the device that fences it: it could not shoot itself
            # reliably, and a hung server must be shot by its partner.
            node_scores.append(
                NodeScore(
                    f"{device.id}-avoids-{server.hostname}", device.id, server.hostname, "-INFINITY"
                )
            )
        fencing_levels += [
            FencingLevel(f"fencing-{server.hostname}-1", server.hostname, 1, ipmi.id),
            FencingLevel(f"fencing-{server.hostname}-2", server.hostname, 2, pdu.id),
        ]

    targets = tuple(_target_resource(target) for target in plan.targets)
    health_rules: list[HealthRule] = []
    for target in plan.targets:
        node_scores.append(
            NodeScore(
                f"{target.label}-prefers-{target.primary}",
                target.label,
                target.primary,
                str(LOCATION_SCORE_PRIMARY),
            )
        )
        node_scores.append(
            NodeScore(
                f"{target.label}-prefers-{target.failover}",
                target.label,
                target.failover,
                str(LOCATION_SCORE_FAILOVER),
            )
        )
        health_rules.append(
            HealthRule(
                f"{target.label}-on-healthy-node", target.label, (LNET_ATTRIBUTE, LUSTRE_ATTRIBUTE)
            )
        )

    orders: list[Order] = []
    colocations: list[Colocation] = []
    mgt = next((target for target in plan.targets if target.kind == "MGT"), None)
    if mgt is not None:
        for mdt in (target for target in plan.targets if target.kind == "MDT"):
            # An MDT registers with the MGS when it mounts. Optional: it orders starts that
            # happen together (cluster start, failover) without restarting a running MDT
            # whenever the MGS restarts.
            orders.append(
                Order(f"{mgt.label}-before-{mdt.label}", mgt.label, mdt.label, "Optional")
            )
            if mdt.primary == mgt.primary:
                colocations.append(
                    Colocation(
                        f"{mdt.label}-with-{mgt.label}",
                        mdt.label,
                        mgt.label,
                        str(MDT_WITH_MGS_SCORE),
                    )
                )

    return PairCluster(
        name=plan.cluster_name,
        nodes=(first.hostname, second.hostname),
        properties=CLUSTER_PROPERTIES,
        resource_defaults=RESOURCE_DEFAULTS,
        fence_devices=tuple(fence_devices),
        targets=targets,
        health_clones=_health_clones(plan),
        node_scores=tuple(node_scores),
        health_rules=tuple(health_rules),
        orders=tuple(orders),
        colocations=tuple(colocations),
        fencing_levels=tuple(fencing_levels),
    )
