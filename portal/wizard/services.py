"""The wizard's draft, the specs it makes, and the provisioning job it starts.

The draft lives in the user's session, so the browser's back button and a reload lose nothing
and nothing touches the inventory before confirm. BMC passwords are kept in it encrypted.
"""

from __future__ import annotations

import copy

from django.conf import settings
from django.db import transaction

from portal import crypto
from portal.inventory.models import ServerPair, Target
from portal.inventory.services import ansible_inventory, record_observations, save_plans
from portal.jobs.choices import JobKind
from portal.jobs.models import Job
from portal.jobs.services import StepFailed, StepSpec, create_job, enqueue
from portal.wizard.choices import FilesystemMode, WizardStep
from provisioning.ha import build_cib
from provisioning.ha.describe import describe_cib
from provisioning.playbook_vars import (
    FENCE_SECRET_SCRIPT,
    SENSOR_SOURCE,
    array_layout,
    target_list,
)
from provisioning.runner import run_playbook

SESSION_KEY = "ssu_wizard"

# One step per playbook of provisioning/ansible; each is idempotent, so a retry or a re-run of
# a finished job checks the hosts and changes nothing that is already as planned.
PROVISIONING_STEPS = [
    StepSpec(
        "preflight",
        "Preflight: hosts, Lustre tools, NIDs, arrays and drives as planned",
        "portal.wizard.services.run_playbook_step",
    ),
    StepSpec(
        "array",
        "Create volume groups, volumes and hot spares on the arrays",
        "portal.wizard.services.run_playbook_step",
    ),
    StepSpec("lnet", "Configure and start LNet", "portal.wizard.services.run_playbook_step"),
    StepSpec(
        "format",
        "Format the targets (mkfs.lustre with both service nodes)",
        "portal.wizard.services.run_playbook_step",
    ),
    StepSpec(
        "mount",
        "Mount each target on its primary server",
        "portal.wizard.services.run_playbook_step",
    ),
    StepSpec(
        "ha",
        "Push the Pacemaker configuration with fencing and wait for the targets",
        "portal.wizard.services.run_playbook_step",
    ),
    StepSpec(
        "sensor",
        "Install, configure and start the Ostara sensor on every server",
        "portal.wizard.services.run_playbook_step",
    ),
    StepSpec(
        "verify",
        "Verify: mounted where Pacemaker says, registered, healthy",
        "portal.wizard.services.run_playbook_step",
    ),
]


class Draft:
    """The wizard's answers so far, kept in the session."""

    def __init__(self, session) -> None:
        self.session = session
        self.data: dict = copy.deepcopy(session.get(SESSION_KEY, {}))

    def save(self) -> None:
        self.session[SESSION_KEY] = self.data
        self.session.modified = True

    def clear(self) -> None:
        self.session.pop(SESSION_KEY, None)
        self.data = {}

    @property
    def new_filesystem(self) -> bool:
        return self.data.get("filesystem", {}).get("mode") == FilesystemMode.NEW

    @property
    def filesystem_name(self) -> str | None:
        return self.data.get("filesystem", {}).get("name")

    def done(self, step: str) -> bool:
        return bool(self.data.get("done", {}).get(step))

    def mark_done(self, step: str, done: bool = True) -> None:
        marks = self.data.setdefault("done", {})
        if done:
            marks[step] = True
        else:
            marks.pop(step, None)

    def first_missing_step(self) -> str:
        for step in (WizardStep.FILESYSTEM, WizardStep.SERVERS, WizardStep.ARRAYS):
            if not self.done(step):
                return step
        return WizardStep.REVIEW

    def servers_of(self, group: str) -> list[dict]:
        """The servers stored for one pair ("mds" or "oss"), in the order entered."""
        return self.data.get("servers", {}).get(group, {}).get("servers", [])

    def store_servers(self, group: str, pair_name: str, servers: list[dict]) -> None:
        """Keep one pair's servers; an empty password keeps the one entered before (for the
        same host name, else for the same position)."""
        old = self.servers_of(group)
        by_hostname = {s["hostname"]: s for s in old}
        stored = []
        for position, server in enumerate(servers):
            entry = {
                key: server[key] for key in ("hostname", "nids", "bmc", "pdu_outlet", "bmc_user")
            }
            if server.get("bmc_password"):
                entry["bmc_password"] = crypto.encrypt(server["bmc_password"])
            else:
                earlier = by_hostname.get(server["hostname"]) or (
                    old[position] if position < len(old) else {}
                )
                entry["bmc_password"] = earlier.get("bmc_password", "")
            stored.append(entry)
        self.data.setdefault("servers", {})[group] = {"name": pair_name, "servers": stored}

    def has_password(self, group: str, position: int) -> bool:
        servers = self.servers_of(group)
        return position < len(servers) and bool(servers[position].get("bmc_password"))

    # --- specs: the same JSON the planner command takes ---------------------------------

    def mds_spec(self) -> dict | None:
        if not self.new_filesystem or "mds" not in self.data.get("servers", {}):
            return None
        mds = self.data["servers"]["mds"]
        return {
            "filesystem": self.filesystem_name,
            "ssu": mds["name"],
            "role": "mds",
            "servers": [_spec_server(s) for s in mds["servers"]],
            "raid": "10",
            "segment_kib": 128,
            "first_mdt_index": 0,
            "arrays": [self.data["servers"]["mdt_array"]],
        }

    def ssu_spec(self) -> dict | None:
        if "oss" not in self.data.get("servers", {}) or "arrays" not in self.data:
            return None
        oss = self.data["servers"]["oss"]
        layout = self.data["arrays"]
        return {
            "filesystem": self.filesystem_name,
            "ssu": oss["name"],
            "role": "oss",
            "servers": [_spec_server(s) for s in oss["servers"]],
            "raid": "8+2",
            "segment_kib": layout["segment_kib"],
            "first_ost_index": layout["first_ost_index"],
            "arrays": layout["arrays"],
        }

    def specs(self) -> list[dict]:
        return [spec for spec in (self.mds_spec(), self.ssu_spec()) if spec]

    def credentials(self) -> dict[str, tuple[str, str]]:
        credentials = {}
        for group in self.data.get("servers", {}).values():
            for server in group.get("servers", []) if isinstance(group, dict) else []:
                password = server.get("bmc_password", "")
                credentials[server["hostname"]] = (
                    server["bmc_user"],
                    crypto.decrypt(password) if password else "",
                )
        return credentials

    def load_spec(self, spec: dict) -> None:
        """Fill the draft from an uploaded spec (passwords must then be entered again)."""
        role = spec.get("role", "oss")
        servers = [
            dict(s, bmc_user=s.get("bmc_user", ""), bmc_password="")
            for s in spec.get("servers", [])
            if isinstance(s, dict)
        ]
        self.data.setdefault("servers", {})
        if role == "mds":
            self.data["filesystem"] = {"mode": FilesystemMode.NEW, "name": spec.get("filesystem")}
            self.store_servers("mds", spec.get("ssu", ""), servers)
            arrays = spec.get("arrays") or [{}]
            self.data["servers"]["mdt_array"] = arrays[0]
        else:
            self.data.setdefault(
                "filesystem", {"mode": FilesystemMode.EXISTING, "name": spec.get("filesystem")}
            )
            self.store_servers("oss", spec.get("ssu", ""), servers)
            self.data["arrays"] = {
                "segment_kib": spec.get("segment_kib", 128),
                "first_ost_index": spec.get("first_ost_index", 0),
                "arrays": spec.get("arrays", []),
            }
        # Passwords never travel in a spec file: the servers step must be confirmed again.
        self.mark_done(WizardStep.SERVERS, False)


def _spec_server(server: dict) -> dict:
    return {key: server[key] for key in ("hostname", "nids", "bmc", "pdu_outlet")}


def failover_map(plan: dict) -> list[dict]:
    """Per server: the targets it serves normally, and all it serves when its partner fails."""
    rows = []
    for server in plan["servers"]:
        host = server["hostname"]
        normal = [t["label"] for t in plan["targets"] if t["primary"] == host]
        taken_over = [t["label"] for t in plan["targets"] if t["failover"] == host]
        rows.append(
            {"server": host, "normal": normal, "after_partner_failure": normal + taken_over}
        )
    return rows


def enclosure_pictures(plan: dict) -> list[dict]:
    """Each enclosure drawer by drawer: which volume group (or spare) each slot holds."""
    owner: dict[tuple, tuple[int, str]] = {}
    for number, group in enumerate(plan["volume_groups"]):
        for drive in group["drives"]:
            owner[(drive["enclosure"], drive["drawer"], drive["slot"])] = (number, group["name"])
    spares = {(d["enclosure"], d["drawer"], d["slot"]) for d in plan["spares"]}
    pictures = []
    for array in plan["arrays"]:
        for enclosure in array["enclosures"]:
            drawers = []
            for drawer in range(1, enclosure["drawers"] + 1):
                cells = []
                for slot in range(1, enclosure["slots_per_drawer"] + 1):
                    key = (enclosure["id"], drawer, slot)
                    if key in owner:
                        number, name = owner[key]
                        cells.append(
                            {"text": f"{number:02d}", "title": name, "css": f"vg{number % 12}"}
                        )
                    elif key in spares:
                        cells.append({"text": "S", "title": "global hot spare", "css": "spare"})
                    else:
                        cells.append({"text": "·", "title": "unused", "css": "unused"})
                drawers.append({"number": drawer, "cells": cells})
            pictures.append(
                {"id": enclosure["id"], "model": enclosure["model"], "drawers": drawers}
            )
    return pictures


def pacemaker_summary(plan: dict) -> dict:
    """What the pair's cluster will hold, for the review page."""
    description = describe_cib(build_cib(plan))
    resources = dict(description.resources)
    fence_devices = sorted(rid for rid, r in resources.items() if r.agent.startswith("stonith:"))
    targets = sorted(rid for rid, r in resources.items() if r.agent == "ocf:lustre:Lustre")
    return {
        "nodes": sorted(description.nodes),
        "fence_devices": fence_devices,
        "fencing_levels": sorted(description.fencing_levels),
        "target_resources": len(targets),
        "health_clones": sorted({r.clone for r in resources.values() if r.clone}),
        "stonith_enabled": dict(description.properties).get("stonith-enabled"),
        "no_quorum_policy": dict(description.properties).get("no-quorum-policy"),
        "resource_defaults": dict(description.resource_defaults),
        "orders": sorted(description.orders),
    }


def start_provisioning(draft: Draft, user) -> Job:
    """Save every pair of the draft and start the job that builds them; all or nothing."""
    with transaction.atomic():
        pairs = save_plans(draft.specs(), draft.credentials())
        names = " and ".join(pair.name for pair in pairs)
        job = create_job(
            JobKind.PROVISION_PAIR,
            f"Provision {names} of {pairs[0].filesystem.name}",
            PROVISIONING_STEPS,
            params={"pairs": [pair.name for pair in pairs]},
            pair=pairs[-1],
            user=user,
        )
        enqueue(job)
    draft.clear()
    return job


def run_playbook_step(job: Job, step, console) -> None:
    """A provisioning step: run the playbook named like the step against the job's pairs."""

    pairs = list(
        ServerPair.objects.filter(name__in=job.params["pairs"]).select_related("filesystem")
    )
    order = {name: position for position, name in enumerate(job.params["pairs"])}
    pairs.sort(key=lambda pair: order[pair.name])  # the MDS pair (and MGS) before the OSSs
    console.say(f"running {step.name}.yml on {', '.join(p.name for p in pairs)}")
    result = run_playbook(
        f"{step.name}.yml",
        ansible_inventory(pairs, settings.VIRTUAL_RACK),
        playbook_variables(pairs),
        work_dir=settings.ANSIBLE_WORK_DIR,
        on_output=console.write,
        cancel=None,
    )
    console.say(result.summary())
    if not result.succeeded:
        raise StepFailed(result.summary())
    placed = {
        target["label"]: host
        for host, facts in result.facts.items()
        for target in facts.get("placed_here", [])
    }
    if placed:
        labels = Target.objects.filter(volume_group__array__pair__in=pairs).values_list(
            "label", flat=True
        )
        moved = record_observations(placements={label: placed.get(label) for label in labels})
        console.say(f"recorded where {len(placed)} targets run ({moved} changed)")


def fence_user(pair) -> dict | None:
    """The BMC user the pair's IPMI fence devices log in as (one per cluster, as in the CIB).

    The servers step asks for a user per server; when they differ, the first server's is used
    and the other must accept it (the recipe has one fence user per pair).
    """
    users = [s.bmc_username for s in pair.servers.order_by("hostname") if s.bmc_username]
    return {"ipmi_username": users[0]} if users else None


def playbook_variables(pairs) -> dict:
    """What the playbooks need beyond the inventory: each pair's plan and cluster
    configuration, the MGS NIDs, and the BMC secrets (tasks that use them log nothing)."""
    variables: dict = {
        "ostara_plans": {},
        "ostara_cibs": {},
        "ostara_layouts": {},
        "ostara_targets": {},
        "ostara_fence_secrets": {},
        "ostara_fence_secret_script": str(FENCE_SECRET_SCRIPT),
        "ostara_sensor_source": str(SENSOR_SOURCE),
        "ostara_sensor_interval": settings.OSTARA_SENSOR_INTERVAL,
        "ostara_influxdb_url": settings.OSTARA_SENSOR_INFLUXDB_URL,
        "ostara_influxdb_database": settings.INFLUXDB_DATABASE,
        "ostara_smcli": str(settings.VIRTUAL_RACK / "bin" / "SMcli")
        if settings.VIRTUAL_RACK
        else "SMcli",
    }
    for pair in pairs:
        mgs_nids = pair.filesystem.mgs_nids
        variables["ostara_plans"][pair.name] = pair.plan
        variables["ostara_cibs"][pair.name] = build_cib(pair.plan, fence_user(pair))
        variables["ostara_layouts"][pair.name] = array_layout(pair.plan)
        variables["ostara_targets"][pair.name] = target_list(pair.plan, mgs_nids)
        for server in pair.servers.all():
            if server.bmc_password_encrypted:
                variables["ostara_fence_secrets"][f"bmc-{server.hostname}"] = server.bmc_password
    return variables
