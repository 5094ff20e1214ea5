"""The wizard's draft, the specs it makes, and the provisioning job it starts.

The draft lives in the user's session, so the browser's back button and a reload lose nothing
and nothing touches the inventory before confirm. BMC passwords are kept in it encrypted.
"""

from __future__ import annotations

import copy

from portal.accounts import crypto
from portal.inventory.choices import PairKind
from portal.inventory.models import MONITOR_USER
from portal.inventory.provisioning import start_provisioning as provision_specs
from portal.jobs.models import Job
from portal.wizard.choices import FilesystemMode, WizardStep
from provisioning.ha import build_cib
from provisioning.ha.corosync import ONE_LINK_WARNING, one_link_servers
from provisioning.ha.describe import describe_cib
from provisioning.planner import SpecError, make_plan

SESSION_KEY = "ssu_wizard"


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
            entry.update({key: server.get(key) or "" for key in LINK_KEYS})
            if server.get("bmc_password"):
                entry["bmc_password"] = crypto.encrypt(server["bmc_password"])
            else:
                earlier = by_hostname.get(server["hostname"]) or (
                    old[position] if position < len(old) else {}
                )
                entry["bmc_password"] = earlier.get("bmc_password", "")
            stored.append(entry)
        self.data.setdefault("servers", {})[group] = {"name": pair_name, "servers": stored}

    def store_monitor_password(self, group: str, password: str) -> None:
        """The arrays' monitor password of one pair's step, encrypted; empty keeps the one
        entered before."""
        if password:
            self.data.setdefault("monitor_passwords", {})[group] = crypto.encrypt(password)

    def needs_monitor_password(self, group: str, arrays: list[dict], typed: str) -> bool:
        """Arrays given management addresses need the monitor password, typed now or before."""
        given = any(array.get("management") for array in arrays)
        return given and not typed and not self.data.get("monitor_passwords", {}).get(group)

    def monitor_credentials(self) -> dict[str, tuple[str, str]]:
        """Array -> its monitor account, for the arrays of each pair's step."""
        stored = self.data.get("monitor_passwords", {})
        found = {}
        for group, spec in ((PairKind.MDS, self.mds_spec()), (PairKind.OSS, self.ssu_spec())):
            password = crypto.decrypt(stored[group]) if stored.get(group) else ""
            for array in (spec or {}).get("arrays", []):
                found[array["name"]] = (MONITOR_USER, password)
        return found

    def has_password(self, group: str, position: int) -> bool:
        servers = self.servers_of(group)
        return position < len(servers) and bool(servers[position].get("bmc_password"))

    # --- specs: the same JSON the planner command takes ---------------------------------

    def mds_spec(self) -> dict | None:
        if not self.new_filesystem or PairKind.MDS not in self.data.get("servers", {}):
            return None
        mds = self.data["servers"][PairKind.MDS]
        return {
            "filesystem": self.filesystem_name,
            "ssu": mds["name"],
            "role": PairKind.MDS,
            "servers": [_spec_server(s) for s in mds["servers"]],
            "raid": "10",
            "segment_kib": 128,
            "first_mdt_index": 0,
            "arrays": [self.data["servers"]["mdt_array"]],
        }

    def ssu_spec(self) -> dict | None:
        if PairKind.OSS not in self.data.get("servers", {}) or "arrays" not in self.data:
            return None
        oss = self.data["servers"][PairKind.OSS]
        layout = self.data["arrays"]
        return {
            "filesystem": self.filesystem_name,
            "ssu": oss["name"],
            "role": PairKind.OSS,
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
        role = spec.get("role", PairKind.OSS)
        servers = [
            dict(s, bmc_user=s.get("bmc_user", ""), bmc_password="")
            for s in spec.get("servers", [])
            if isinstance(s, dict)
        ]
        self.data.setdefault("servers", {})
        if role == PairKind.MDS:
            self.data["filesystem"] = {"mode": FilesystemMode.NEW, "name": spec.get("filesystem")}
            self.store_servers(PairKind.MDS, spec.get("ssu", ""), servers)
            arrays = spec.get("arrays") or [{}]
            self.data["servers"]["mdt_array"] = arrays[0]
        else:
            self.data.setdefault(
                "filesystem", {"mode": FilesystemMode.EXISTING, "name": spec.get("filesystem")}
            )
            self.store_servers(PairKind.OSS, spec.get("ssu", ""), servers)
            self.data["arrays"] = {
                "segment_kib": spec.get("segment_kib", 128),
                "first_ost_index": spec.get("first_ost_index", 0),
                "arrays": spec.get("arrays", []),
            }
        # Passwords never travel in a spec file: the servers step must be confirmed again.
        self.mark_done(WizardStep.SERVERS, False)


# What the wizard's steps can carry from a loaded spec, per role; the rest must be refused by
# name (a field dropped silently would build something other than the spec says).
LINK_KEYS = ("mgmt_address", "heartbeat_address")
_SERVER_KEYS = {"hostname", "nids", "bmc", "pdu_outlet", *LINK_KEYS}
_ARRAY_KEYS = {
    PairKind.MDS: {"name", "controller", "drive_tb", "management"},
    PairKind.OSS: {"name", "controller", "expansions", "drive_tb", "global_spares", "management"},
}
_TOP_KEYS = {
    PairKind.MDS: {"filesystem", "ssu", "role", "servers", "arrays"},
    PairKind.OSS: {
        "filesystem",
        "ssu",
        "role",
        "servers",
        "arrays",
        "segment_kib",
        "first_ost_index",
    },  # fmt: skip
}
# Fields the wizard fixes per role: a spec may repeat the value, not change it.
_FIXED = {
    PairKind.MDS: {"raid": "10", "segment_kib": 128, "first_mdt_index": 0},
    PairKind.OSS: {"raid": "8+2"},
}
_ELSEWHERE = "the wizard cannot carry it; build this spec with `manage.py provision`"


def spec_refusals(spec: dict) -> dict[str, str]:
    """Field -> why, for a spec the wizard cannot load as it stands: the planner's own
    complaints first, then every field the wizard's steps would not carry."""
    try:
        make_plan(spec)
    except SpecError as error:
        return dict(error.errors)
    role = spec.get("role", PairKind.OSS)
    refusals: dict[str, str] = {}
    for key, value in spec.items():
        if key in _FIXED[role]:
            if value != _FIXED[role][key]:
                refusals[key] = (
                    f"the wizard builds {role.upper()} pairs with {key} "
                    f"{_FIXED[role][key]!r}; {_ELSEWHERE}"
                )
        elif key not in _TOP_KEYS[role]:
            refusals[key] = _ELSEWHERE
    for position, server in enumerate(spec.get("servers", [])):
        for key in sorted(set(server) - _SERVER_KEYS):
            refusals[f"servers[{position}].{key}"] = _ELSEWHERE
    arrays = spec.get("arrays", [])
    if role == PairKind.MDS and len(arrays) > 1:
        refusals["arrays"] = f"the wizard builds an MDS pair on one array; {_ELSEWHERE}"
    for position, array in enumerate(arrays):
        for key in sorted(set(array) - _ARRAY_KEYS[role]):
            if key == "expansions" and not array[key]:
                continue
            refusals[f"arrays[{position}].{key}"] = _ELSEWHERE
        if role == PairKind.OSS and len(set(array.get("expansions", []))) > 1:
            refusals[f"arrays[{position}].expansions"] = (
                f"the wizard adds expansions of one model per array; {_ELSEWHERE}"
            )
    return refusals


def _spec_server(server: dict) -> dict:
    spec = {key: server[key] for key in ("hostname", "nids", "bmc", "pdu_outlet")}
    # Link addresses only when given: a spec without them is the one-link cluster.
    spec.update({key: server[key] for key in LINK_KEYS if server.get(key)})
    return spec


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
        # Corosync under it: each server's links, and the warning when there is only one.
        "links": [
            (server["hostname"], [server.get(k) or "" for k in LINK_KEYS])
            for server in plan["servers"]
        ],
        "one_link": ONE_LINK_WARNING if one_link_servers(plan) else "",
    }


def start_provisioning(draft: Draft, user, skip_acceptance: str = "") -> Job:
    """Save every pair of the draft and start the job that builds them; all or nothing.
    ``skip_acceptance`` says why the job ends without its acceptance survey, if it does."""
    params = {"skip_acceptance": True, "skip_reason": skip_acceptance} if skip_acceptance else {}
    job = provision_specs(
        draft.specs(), draft.credentials(), user, params, draft.monitor_credentials()
    )
    draft.clear()
    return job
