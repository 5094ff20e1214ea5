"""Failover, failback and maintenance of Lustre servers, through Pacemaker.

Each act is a short list of ``provisioning.ha.operator`` commands (what ``pcs resource move``,
``ban``, ``clear`` and ``pcs node standby`` run), tried first on a copy of the pair's live CIB
with Pacemaker's own scheduler: the operator confirms "which targets move where", and the job
waits until the cluster has done exactly that. Failback is an operator's act (DESIGN §2): it is
refused while the server is not healthy, as its sensors and its cluster report it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from portal.alerts.models import Silence
from portal.console.choices import (
    DEFAULT_LIFETIME,
    KIND_FAILBACK,
    KIND_FAILOVER,
    KIND_MAINTENANCE,
    MAX_MAINTENANCE_HOURS,
    Act,
    ObjectKind,
)
from portal.console.models import Maintenance
from portal.console.services import (
    Author,
    ConfirmationNeeded,
    ConsoleError,
    Proposal,
    Refused,
    Say,
    audit,
    audit_refusal,
    not_an_option,
    require,
    run_on_pair,
)
from portal.health.registry import MaintenanceWindow
from portal.health.services import facts as health_facts
from portal.inventory.choices import TargetState
from portal.inventory.models import Server, ServerPair, Target
from portal.inventory.services import record_observations
from portal.jobs.choices import JobState, Mark
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed
from portal.jobs.services import create_job, enqueue, marks_for
from provisioning.ha.cluster import LNET_ATTRIBUTE, LUSTRE_ATTRIBUTE
from provisioning.ha.history import failed_nodes
from provisioning.ha.operator import (
    Action,
    Ban,
    Cleanup,
    Clear,
    Move,
    Standby,
    WhatIf,
    check_lifetime,
    current,
    what_if,
)
from provisioning.ha.simulate import SimulationError, node_attributes

KINDS = {
    Act.FAILOVER: KIND_FAILOVER,
    Act.FAILBACK: KIND_FAILBACK,
    Act.MAINTENANCE_START: KIND_MAINTENANCE,
    Act.MAINTENANCE_END: KIND_MAINTENANCE,
}
_STARTED_RE = re.compile(
    r'<resource id="([^"]+)" resource_agent="ocf:lustre:Lustre" role="Started"[^>]*>\s*'
    r'<node name="([^"]+)"'
)


@dataclass
class ClusterPlan:
    """An act on a pair worked out against its live cluster."""

    act: str
    subject: Server | Target
    pair: ServerPair
    actions: list[Action]
    after: list[Action]
    expect: dict[str, str]
    result: WhatIf

    @property
    def proposal(self) -> Proposal:
        title = f"{Act(self.act).label} of {_name(self.subject)}"
        lines = [
            f"{label}: {source or 'not running'} → {where}" for label, source, where in self.moves
        ]
        commands = [" ".join(action.argv()) for action in self.actions + self.after]
        return Proposal(title, lines or ["no target moves"], warnings=[], commands=commands)

    @property
    def moves(self) -> list[tuple[str, str | None, str | None]]:
        return [
            (label, self.result.before.get(label), where)
            for label, where in sorted(self.expect.items())
            if self.result.before.get(label) != where
        ]


def _name(subject: Server | Target) -> str:
    return subject.hostname if isinstance(subject, Server) else subject.label


def subject_of(kind: str, name: str) -> Server | Target:
    """The server or target an act names; ConsoleError naming the field when there is none.
    Its name goes to crm_resource and crm_attribute: never one that reads as an option."""
    if kind in (ObjectKind.SERVER, ObjectKind.TARGET):
        not_an_option(kind, name)
    if kind == ObjectKind.SERVER:
        server = Server.objects.select_related("pair").filter(hostname=name).first()
        if server is None or server.pair is None:
            raise ConsoleError("server", f"no server named {name!r}")
        return server
    if kind == ObjectKind.TARGET:
        target = (
            Target.objects.select_related("primary_server__pair", "failover_server")
            .filter(label=name)
            .first()
        )
        if target is None:
            raise ConsoleError("target", f"no target named {name!r}")
        return target
    raise ConsoleError("object_kind", f"acts apply to a server or a target, not {kind!r}")


def pair_of(subject: Server | Target) -> ServerPair:
    return subject.pair if isinstance(subject, Server) else subject.primary_server.pair


def busy(pair: ServerPair) -> str | None:
    """A job still pending or running on the pair: one act at a time per pair."""
    job = Job.objects.filter(pairs=pair, state__in=[JobState.PENDING, JobState.RUNNING]).first()
    return f"job #{job.pk} ({job.title}) is still {job.state} on {pair.name}" if job else None


def live_cib(pair: ServerPair, hosts: list[Server], say: Say | None = None, write=None) -> str:
    result, host = run_on_pair(
        pair,
        "cluster.yml",
        {"ostara_cluster": {}},
        key="ostara_cluster",
        hosts=hosts,
        say=say,
        write=write,
    )
    if not result.succeeded:
        raise Refused("pair", [f"the cluster of {pair.name} cannot be read: {result.summary()}"])
    return result.facts[host]["cluster_cib"]


def standby(cib: str, hostname: str) -> bool:
    """The node is in standby (``pcs node standby``: a permanent node attribute)."""
    root = ET.fromstring(cib)
    for node in root.iterfind("./configuration/nodes/node"):
        if node.get("uname") == hostname:
            for pair in node.iterfind("./instance_attributes/nvpair"):
                if pair.get("name") == "standby":
                    return pair.get("value", "").lower() in ("on", "true", "yes", "1")
    return False


def health_refusals(server: Server, cib: str, online: tuple[str, ...]) -> list[str]:
    """Why a server must not take its targets back now, from its sensors and its cluster."""
    reasons = []
    name = server.hostname
    if name not in online:
        reasons.append(f"{name} is not online in its cluster")
    attributes = node_attributes(cib, name)
    if attributes.get(LNET_ATTRIBUTE) == "0":
        reasons.append(f"Pacemaker's LNet health agent reports LNet down on {name}")
    if attributes.get(LUSTRE_ATTRIBUTE) == "0":
        reasons.append(f"Pacemaker's Lustre health agent reports Lustre unhealthy on {name}")
    facts = health_facts.gather_facts()
    servers = {
        s.hostname: s for fs in facts.filesystems for unit in fs.units for s in unit.pair.servers
    }
    mine = servers.get(name)
    silence = facts.thresholds.sensor_silence_seconds
    if mine is None or mine.last_seen is None or facts.now - mine.last_seen > silence:
        reasons.append(f"{name}'s sensor has not reported for over {silence:.0f} s")
        return reasons
    if mine.lnet_up is False:
        reasons.append(f"LNet is down on {name} (lnetctl net show)")
    elif mine.lnet_partner_ping is False:
        reasons.append(f"{name} cannot reach its partner over LNet (lnetctl ping)")
    if mine.lustre_healthy is False:
        reasons.append(f"Lustre on {name} reports NOT HEALTHY (health_check)")
    if mine.heartbeat_up is False or mine.cluster_running is False:
        reasons.append(f"{name}'s cluster heartbeat is down (corosync-cfgtool -s)")
    partner = server.partner
    watcher = servers.get(partner.hostname) if partner else None
    if watcher is not None and watcher.power_answered is False:
        reasons.append(f"{name}'s BMC does not answer {partner.hostname}: it could not be fenced")
    return reasons


def plan(
    act: str, subject: Server | Target, lifetime: str | None = None, say=None, write=None
) -> ClusterPlan:
    """Work the act out against the pair's live cluster. Raises Refused with the reasons."""
    pair = pair_of(subject)
    servers = list(pair.servers.order_by("hostname"))
    if isinstance(subject, Server):
        server = subject
        # A failover or a maintenance moves whatever runs on the server; a failback brings
        # home the targets whose primary it is.
        everything = Target.objects.filter(primary_server__pair=pair)
        if act in (Act.FAILBACK, Act.MAINTENANCE_END):
            everything = everything.filter(primary_server=server)
        labels = list(everything.values_list("label", flat=True))
    else:
        server = subject.primary_server
        labels = [subject.label]
    # Ask the server that is not the one acted on first: it is the one sure to be up.
    hosts = sorted(servers, key=lambda s: s.pk == server.pk)
    cib = live_cib(pair, hosts, say, write)
    try:
        return _plan(act, subject, server, labels, cib, lifetime)
    except SimulationError as error:
        raise Refused("pair", [f"Pacemaker's scheduler could not work it out: {error}"]) from None


def _plan(act, subject, server, labels, cib, lifetime) -> ClusterPlan:
    pair = server.pair
    before, online = current(cib)
    host = server.hostname
    partner = server.partner.hostname if server.partner else None
    after: list[Action] = []
    refusals: list[str] = []
    if act == Act.FAILOVER:
        if isinstance(subject, Server):
            moving = [label for label in labels if before.get(label) == host]
            source = host
        else:
            source = before.get(subject.label)
            moving = [subject.label] if source else []
        if not moving:
            raise Refused(
                _field(subject), [f"no target of {_name(subject)} is running to fail over"]
            )
        target_node = partner if source == host else host
        if target_node not in online:
            raise Refused(
                _field(subject),
                [f"{target_node} is not online: the targets would have nowhere to go"],
            )
        actions: list[Action] = [
            Ban(label, source, lifetime or DEFAULT_LIFETIME) for label in moving
        ]
    elif act == Act.FAILBACK:
        moving = [label for label in labels if before.get(label) != host]
        if not moving:
            raise Refused(
                _field(subject),
                [f"every target of {_name(subject)} is on its primary server already"],
            )
        if standby(cib, host):
            refusals.append(f"{host} is in maintenance (standby): end its maintenance instead")
        refusals += health_refusals(server, cib, online)
        if refusals:
            raise Refused(_field(subject), refusals)
        actions = _bring_home(cib, moving, host, before)
        after = [Clear(label) for label in moving]
    elif act == Act.MAINTENANCE_START:
        if Maintenance.objects.filter(server=server, ended__isnull=True).exists():
            raise Refused("server", [f"{host} is in maintenance already"])
        if partner not in online:
            raise Refused(
                "server", [f"{partner} is not online: {host}'s targets would have nowhere to go"]
            )
        moving = [label for label in labels if before.get(label) == host]
        actions = [Standby(host)]
    elif act == Act.MAINTENANCE_END:
        if not Maintenance.objects.filter(
            server=server, ended__isnull=True
        ).exists() and not standby(cib, host):
            raise Refused("server", [f"{host} is not in maintenance"])
        moving = [label for label in labels if before.get(label) != host]
        reasons = [r for r in health_refusals(server, cib, online) if "not online" not in r]
        if reasons:
            raise Refused("server", reasons)
        actions = [Standby(host, on=False), *_bring_home(cib, moving, host, before)]
        after = [Clear(label) for label in moving]
    else:
        raise ConsoleError("act", f"unknown act {act!r}")
    result = what_if(cib, actions)
    expect = {label: result.after.get(label) for label in moving}
    stranded = sorted(label for label, where in expect.items() if where is None)
    if stranded:
        raise Refused(
            _field(subject), [f"Pacemaker would leave {', '.join(stranded)} running nowhere"]
        )
    if act in (Act.FAILBACK, Act.MAINTENANCE_END):
        elsewhere = sorted(label for label, where in expect.items() if where != host)
        if elsewhere:
            raise Refused(
                _field(subject), [f"Pacemaker would not run {', '.join(elsewhere)} on {host}"]
            )
    return ClusterPlan(act, subject, pair, actions, after, expect, result)


def _bring_home(
    cib: str, labels: list[str], host: str, before: dict[str, str | None]
) -> list[Action]:
    """Move each target to ``host``, clearing first the console's earlier move or ban of it
    (``pcs resource clear``). A target with none needs no clear: a failback after a crash has
    none of them.

    A target whose start failed (while its volume group or SAS paths were down) is then
    cleaned up (``pcs resource cleanup``): Pacemaker runs it on a node where it failed only
    once its failures are erased. One that runs nowhere starts at once where the cluster
    prefers it, its primary: it needs no move (crm_resource refuses a move to where it runs)."""
    root = ET.fromstring(cib)
    constrained = _constrained(root)
    actions: list[Action] = []
    for label in labels:
        # The clear first: a cleaned-up target that runs nowhere starts at once, and still
        # kept off its primary by a ban it would start on the partner and stay there.
        failed = bool(failed_nodes(root, label))
        if label in constrained:
            actions.append(Clear(label))
        if failed:
            actions.append(Cleanup(label))
        if not (failed and before.get(label) is None):
            actions.append(Move(label, host))
    return actions


def _constrained(root: ET.Element) -> set[str]:
    """The resources with a constraint of crm_resource --move/--ban (ids "cli-...")."""
    return {
        location.get("rsc", "")
        for location in root.iterfind("./configuration/constraints/rsc_location")
        if location.get("id", "").startswith("cli-")
    }


def _field(subject: Server | Target) -> str:
    return "server" if isinstance(subject, Server) else "target"


def start(
    act: str,
    subject: Server | Target,
    author: Author,
    *,
    confirmed: bool,
    lifetime: str | None = None,
    hours: float | None = None,
    reason: str = "",
) -> Job:
    """Check the act, then (confirmed) start its job and write its audit entry."""
    if lifetime:
        try:
            check_lifetime(lifetime)
        except ValueError as error:
            raise ConsoleError("lifetime", str(error)) from None
    if act == Act.MAINTENANCE_START:
        hours = hours or 0
        if not 0 < hours <= MAX_MAINTENANCE_HOURS:
            raise ConsoleError(
                "hours", f"a maintenance window lasts 1 to {MAX_MAINTENANCE_HOURS} hours"
            )
        if not reason.strip():
            raise ConsoleError("reason", "say why the server goes into maintenance")
    pair = pair_of(subject)
    kind = ObjectKind.SERVER if isinstance(subject, Server) else ObjectKind.TARGET
    try:
        running = busy(pair)
        if running:
            raise Refused("pair", [running + ": wait for it or cancel it"])
        worked_out = plan(act, subject, lifetime)
    except Refused as refused:
        audit_refusal(author, act, kind, _name(subject), refused.reasons)
        raise
    proposal = worked_out.proposal
    if not confirmed:
        raise ConfirmationNeeded(proposal)
    params = {
        "act": act,
        "object_kind": kind,
        "object_name": _name(subject),
        "lifetime": lifetime or DEFAULT_LIFETIME,
        "hours": hours,
        "reason": reason.strip(),
        "expect": worked_out.expect,
    }
    with transaction.atomic():
        # Both servers (one gives its targets, the other takes them) and the targets it moves.
        moved = Target.objects.filter(primary_server__pair=pair, label__in=list(worked_out.expect))
        job = create_job(
            KINDS[act],
            proposal.title,
            params=params,
            pairs=[pair],
            user=_user(author),
            marks=marks_for(Mark.MOVES, *pair.servers.all(), *moved),
        )
        audit(author, act, kind, _name(subject), proposal, job=job, details=params)
        enqueue(job)
    return job


def _user(author: Author):
    return author.user if getattr(author.user, "is_authenticated", False) else None


# --- in the job -----------------------------------------------------------------------------


def job_plan(job: Job, say: Say, write) -> ClusterPlan:
    """The act of a job worked out again on the cluster as it is now."""
    params = job.params
    try:
        subject = subject_of(params["object_kind"], params["object_name"])
        return plan(params["act"], subject, params.get("lifetime"), say, write)
    except ConsoleError as error:
        raise StepFailed(str(error)) from None


def carry_out(job: Job, worked_out: ClusterPlan, say: Say, write) -> str:
    """Run the act's commands on the pair, wait until every target is where Pacemaker said,
    record it; returns the outcome in words."""
    variables = {
        "ostara_cluster": {
            "commands": [action.argv() for action in worked_out.actions],
            "after": [action.argv() for action in worked_out.after],
            "expect": worked_out.expect,
        }
    }
    server = (
        worked_out.subject
        if isinstance(worked_out.subject, Server)
        else worked_out.subject.primary_server
    )
    servers = list(worked_out.pair.servers.order_by("hostname"))
    hosts = sorted(servers, key=lambda s: s.pk == server.pk)
    result, host = run_on_pair(
        worked_out.pair,
        "cluster.yml",
        variables,
        key="ostara_cluster",
        hosts=hosts,
        say=say,
        write=write,
    )
    status = result.facts.get(host, {}).get("cluster_status", "")
    placements = dict(_STARTED_RE.findall(status))
    labels = Target.objects.filter(primary_server__pair=worked_out.pair).values_list(
        "label", flat=True
    )
    if status:
        record_observations(placements={label: placements.get(label) for label in labels})
    require(result, "the cluster did not do it")
    act = worked_out.act
    if act == Act.MAINTENANCE_START:
        _open_window(job, server)
    elif act == Act.MAINTENANCE_END:
        _close_window(server)
    moved = len(worked_out.moves)
    partner = server.partner.hostname if server.partner else "the partner"
    where = {
        Act.FAILOVER: "on the partner",
        Act.FAILBACK: "home",
        Act.MAINTENANCE_START: f"on {partner}; {server.hostname} in standby",
        Act.MAINTENANCE_END: f"home; {server.hostname} back in service",
    }[act]
    return f"{moved} target{'s' if moved != 1 else ''} {where}"


def _open_window(job: Job, server: Server) -> None:
    params = job.params
    now = timezone.now()
    ends = now + timedelta(hours=float(params.get("hours") or 1))
    user = job.created_by
    with transaction.atomic():
        window, created = Maintenance.objects.get_or_create(
            server=server,
            ended__isnull=True,
            defaults={"reason": params.get("reason") or "", "ends": ends, "created_by": user},
        )
        if created:
            reason = f"maintenance of {server.hostname}: {params.get('reason') or 'console'}"
            window.silence = Silence.objects.create(
                object_key=f"server:{server.pk}",
                object_label=server.hostname,
                starts=now,
                ends=ends,
                reason=reason[:200],
                created_by=user,
            )
            window.save(update_fields=["silence"])


def _close_window(server: Server) -> None:
    now = timezone.now()
    for window in Maintenance.objects.filter(server=server, ended__isnull=True):
        silence = window.silence
        if silence is not None and silence.ends > now:
            Silence.objects.filter(pk=silence.pk).update(
                ends=max(now, silence.starts + timedelta(seconds=1))
            )
        Maintenance.objects.filter(pk=window.pk).update(ended=now)


def open_windows() -> dict[int, MaintenanceWindow]:
    """The servers in maintenance now, by primary key, for the health facts (registered with
    ``portal.health.registry`` from the console's ``AppConfig.ready``)."""
    return {
        window.server_id: MaintenanceWindow(window.ends, window.reason)
        for window in Maintenance.objects.filter(ended__isnull=True).only(
            "server_id", "ends", "reason"
        )
    }


# --- what applies where ---------------------------------------------------------------------


@dataclass(frozen=True)
class Available:
    slug: str
    label: str
    url: str
    danger: bool = False


ACT_SLUGS = {
    "failover": Act.FAILOVER,
    "failback": Act.FAILBACK,
    "maintenance-start": Act.MAINTENANCE_START,
    "maintenance-end": Act.MAINTENANCE_END,
}


def available(subject) -> list[Available]:
    """The acts that apply to the object in its state as the inventory knows it: no failback
    of a target that is home, no failover of one that runs nowhere."""
    from django.urls import reverse

    from portal.inventory.models import StorageArray

    if isinstance(subject, StorageArray):
        return [Available("drives", "Drives…", reverse("console:array", args=[subject.name]))]
    if isinstance(subject, Target):
        url = lambda slug: reverse("console:target-act", args=[subject.label, slug])  # noqa: E731
        acts = []
        if subject.current_server_id and subject.current_server_id == subject.primary_server_id:
            acts.append(Available("failover", "Fail over…", url("failover"), danger=True))
        elif subject.current_server_id or subject.state != TargetState.PLANNED:
            acts.append(Available("failback", "Fail back…", url("failback")))
        return acts
    if isinstance(subject, Server) and subject.pair_id:
        url = lambda slug: reverse("console:server-act", args=[subject.hostname, slug])  # noqa: E731
        acts = []
        in_maintenance = Maintenance.objects.filter(server=subject, ended__isnull=True).exists()
        if Target.objects.filter(current_server=subject).exists() and not in_maintenance:
            acts.append(Available("failover", "Fail over…", url("failover"), danger=True))
        away = Target.objects.filter(primary_server=subject).exclude(current_server=subject)
        if away.exists() and not in_maintenance:
            acts.append(Available("failback", "Fail back…", url("failback")))
        if in_maintenance:
            acts.append(Available("maintenance-end", "End maintenance…", url("maintenance-end")))
        else:
            acts.append(
                Available(
                    "maintenance-start", "Maintenance…", url("maintenance-start"), danger=True
                )
            )
        return acts
    return []
