"""The pair's Pacemaker configuration as a pcs script, for an administrator to read or run.

Every command edits a CIB file offline (`pcs -f "$CIB"`), so nothing reaches the cluster until
the administrator pushes the reviewed file. It describes the same cluster as `build_cib()`
(both are written from `cluster.pair_cluster()`); a test applies it to an empty CIB and
compares. The script contains no secret: the fence agents fetch theirs through
`password_script`, and the optional secret-storing part prompts for them.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from provisioning.ha.cluster import (
    SECRET_DIR,
    PairCluster,
    Primitive,
    bmc_secret_name,
    pair_cluster,
    pdu_secret_names,
)
from provisioning.ha.plan import PairPlan, read_plan


def _command(*words: str) -> str:
    return " ".join(shlex.quote(word) if word != '"$CIB"' else word for word in words)


def _pcs(*words: str) -> str:
    return _command("pcs", "-f", '"$CIB"', *words)


def _ops(primitive: Primitive) -> list[str]:
    words: list[str] = []
    for op in primitive.ops:
        words += ["op", op.name, f"interval={op.interval}"]
        if op.timeout:
            words.append(f"timeout={op.timeout}")
    return words


def _params(primitive: Primitive) -> list[str]:
    return [f"{name}={value}" for name, value in primitive.params]


def _secret_prompts(plan: PairPlan) -> list[str]:
    lines = []
    pdus_done: set[str] = set()
    for server in plan.servers:
        lines.append(
            _command(
                "store_secret",
                bmc_secret_name(server),
                f"IPMI password on the BMC of {server.hostname} ({server.bmc})",
            )
        )
        if server.pdu not in pdus_done:
            pdus_done.add(server.pdu)
            auth, priv = pdu_secret_names(server)
            lines.append(
                _command(
                    "store_secret", auth, f"SNMPv3 authentication pass phrase of PDU {server.pdu}"
                )
            )
            lines.append(
                _command("store_secret", priv, f"SNMPv3 privacy pass phrase of PDU {server.pdu}")
            )
    return ["    " + line for line in lines]


def _header(plan: PairPlan, cluster: PairCluster) -> list[str]:
    first, second = cluster.nodes
    return [
        "#!/bin/bash",
        f"# Pacemaker configuration of the {plan.role.upper()} pair {first} + {second}",
        f"# (filesystem {plan.filesystem}, {plan.pair}), written by Ostara from the plan.",
        "# It is the same cluster as `python -m provisioning.ha PLAN.json --cib FILE` writes.",
        "#",
        f"# The cluster itself must exist: pcs cluster setup {cluster.name} {first} {second}",
        "#",
        "# Usage, on one of the two servers:",
        "#   STORE_FENCE_SECRETS=yes bash this-script   on BOTH servers once: prompts for the",
        f"#       fence secrets and keeps them root-only in {SECRET_DIR} (either server may",
        "#       have to fence the other)",
        "#   CIB=new.xml bash this-script                edits new.xml (taken from the cluster",
        "#       if missing) offline; review it, then: pcs cluster cib-push new.xml --config",
        "set -euo pipefail",
        "",
    ]


def _secrets_part(plan: PairPlan) -> list[str]:
    return [
        f'SECRET_DIR="${{OSTARA_FENCE_SECRET_DIR:-{SECRET_DIR}}}"',
        "store_secret() {  # NAME PROMPT: read a secret without echo, keep it root-only",
        "    local secret",
        '    read -r -s -p "$2: " secret',
        "    echo",
        '    install -d -m 0700 -o root -g root "$SECRET_DIR"',
        '    rm -f "$SECRET_DIR/$1"  # a new file, so umask decides its mode',
        '    (umask 077 && printf \'%s\\n\' "$secret" > "$SECRET_DIR/$1")',
        "}",
        "",
        'if [ "${STORE_FENCE_SECRETS:-no}" = yes ]; then',
        *_secret_prompts(plan),
        "    exit 0",
        "fi",
        "",
    ]


def cluster_to_pcs(plan: PairPlan, cluster: PairCluster) -> str:
    lines = _header(plan, cluster) + _secrets_part(plan)
    lines += [
        f'CIB="${{CIB:-{cluster.name}.xml}}"',
        '[ -e "$CIB" ] || pcs cluster cib "$CIB"',
        "",
        "# Cluster properties: fencing on; a two-node cluster ignores loss of quorum.",
        _pcs("property", "set", *(f"{name}={value}" for name, value in cluster.properties)),
        "# Nothing moves back by itself after a failover: failback is the operator's act.",
        _pcs(
            "resource",
            "defaults",
            "update",
            *(f"{name}={value}" for name, value in cluster.resource_defaults),
        ),
        "",
        "# Fencing: BMC first, PDU second; a device never runs on the server it fences.",
        "# --force on levels: the nodes are not in an offline CIB file.",
    ]
    for device in cluster.fence_devices:
        lines.append(
            _pcs("stonith", "create", device.id, device.agent, *_params(device), *_ops(device))
        )
    for score in cluster.node_scores:
        if score.resource in {device.id for device in cluster.fence_devices}:
            lines.append(_pcs("constraint", "location", score.resource, "avoids", score.node))
    for level in cluster.fencing_levels:
        lines.append(
            _pcs("stonith", "level", "add", str(level.index), level.node, level.device, "--force")
        )

    lines += [
        "",
        "# Health agents on both servers; they write the node attributes the targets need.",
        "# --force: the Lustre agents are installed on the servers, maybe not here.",
    ]
    for clone in cluster.health_clones:
        primitive = clone.primitive
        lines.append(
            _pcs(
                "resource",
                "create",
                primitive.id,
                f"ocf:{primitive.provider}:{primitive.agent}",
                *_params(primitive),
                *_ops(primitive),
                "clone",
                clone.id,
                "--no-default-ops",
                "--force",
            )
        )

    lines += ["", "# One resource per target, on its primary server when both are healthy."]
    preferences: dict[str, list[str]] = {}
    for score in cluster.node_scores:
        if score.resource not in {device.id for device in cluster.fence_devices}:
            preferences.setdefault(score.resource, []).append(f"{score.node}={score.score}")
    rules = {rule.resource: rule for rule in cluster.health_rules}
    for target in cluster.targets:
        lines.append(
            _pcs(
                "resource",
                "create",
                target.id,
                f"ocf:{target.provider}:{target.agent}",
                *_params(target),
                *_ops(target),
                "--no-default-ops",
                "--force",
            )
        )
        lines.append(_pcs("constraint", "location", target.id, "prefers", *preferences[target.id]))
        rule = rules[target.id]
        expression: list[str] = []
        for attribute in rule.attributes:
            if expression:
                expression.append("or")
            expression += ["not_defined", attribute, "or", attribute, "lte", "number", "0"]
        lines.append(
            _pcs(
                "constraint",
                "location",
                target.id,
                "rule",
                f"constraint-id={rule.id}",
                "score=-INFINITY",
                *expression,
            )
        )

    if cluster.orders or cluster.colocations:
        lines += ["", "# The MGS starts before the MDT; the MDT prefers the MGS's server."]
    for order in cluster.orders:
        lines.append(
            _pcs(
                "constraint",
                "order",
                "start",
                order.first,
                "then",
                "start",
                order.then,
                f"kind={order.kind}",
                f"id={order.id}",
            )
        )
    for colocation in cluster.colocations:
        lines.append(
            _pcs(
                "constraint",
                "colocation",
                "add",
                colocation.resource,
                "with",
                colocation.with_resource,
                colocation.score,
                f"id={colocation.id}",
            )
        )
    lines += [
        "",
        'echo "Configuration written to $CIB. Review it, then: pcs cluster cib-push $CIB --config"',
    ]
    return "\n".join(lines) + "\n"


def build_pcs_script(plan: Mapping[str, Any], fence_credentials: Any = None) -> str:
    """The same cluster as build_cib(), as a bash script of `pcs -f` commands."""
    pair = read_plan(plan)
    return cluster_to_pcs(pair, pair_cluster(pair, fence_credentials))


def secret_names(plan: Mapping[str, Any]) -> Sequence[str]:
    """The secrets the fence agents of this pair ask the secret script for."""
    pair = read_plan(plan)
    names: list[str] = []
    for server in pair.servers:
        names.append(bmc_secret_name(server))
        names += [name for name in pdu_secret_names(server) if name not in names]
    return names
