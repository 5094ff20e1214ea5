"""The health engine's shell: facts in from the inventory and InfluxDB, colours out to the cache.

``gather_facts`` reads the inventory and the newest points of the sensors (DESIGN.md §6) into
the plain facts of ``portal.health.rules``; ``evaluate_and_store`` runs the rules and keeps one
``HealthStatus`` row per object and a ``StatusChange`` row per change of colour. Colour changes
are claimed with a conditional update, so two evaluations at once write each change once.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import IntegrityError, models, transaction
from django.db.models import Prefetch
from django.utils import timezone

from portal import influx
from portal import metric_queries as queries
from portal.console.models import Maintenance
from portal.health import rules
from portal.health.choices import NodeKind, Status
from portal.health.models import Evaluation, HealthSettings, HealthStatus, StatusChange
from portal.inventory.choices import DriveState, PairKind, TargetKind, TargetState
from portal.inventory.models import (
    SSU,
    Drive,
    Filesystem,
    Server,
    ServerPair,
    StorageArray,
    Target,
    VolumeGroup,
)
from portal.inventory.services import DriveMap, record_observations
from sensors import schema

log = logging.getLogger(__name__)

# Targets that are not expected to be mounted yet.
NOT_IN_SERVICE = {TargetState.PLANNED, TargetState.FORMATTED}


@dataclass
class Metrics:
    """The newest points of the sensors, by object."""

    sensor_seen: dict[str, float] = field(default_factory=dict)  # server -> seconds
    node: dict[str, list[dict]] = field(default_factory=dict)  # server -> newest first
    bmc_seen: dict[str, float] = field(default_factory=dict)
    bmc: dict[str, list[dict]] = field(default_factory=dict)
    targets: dict[str, list[dict]] = field(default_factory=dict)  # label -> one per server
    target_round: dict[str, float] = field(default_factory=dict)  # server -> newest target time
    arrays: dict[str, dict[tuple[str, str], dict]] = field(default_factory=dict)
    array_seen: dict[str, float] = field(default_factory=dict)
    # The redundant paths (sensors.redundancy), newest report of each server.
    cluster: dict[str, dict] = field(default_factory=dict)
    lnet_state: dict[str, dict] = field(default_factory=dict)
    multipath_faults: dict[str, list[dict]] = field(default_factory=dict)  # server -> devices
    power: dict[str, dict] = field(default_factory=dict)  # polled server -> newest answer
    power_ok: dict[str, dict] = field(default_factory=dict)  # polled server -> newest "answered"


def read_signals(answers: dict[str, list[dict]], metrics: Metrics) -> None:
    """The answers of ``signal_statements`` into ``metrics``."""
    for point in answers["cluster"]:
        metrics.cluster[point["server"]] = point
    for point in answers["lnet_state"]:
        metrics.lnet_state[point["server"]] = point
    rounds = {
        point["server"]: point["time"]
        for point in answers["multipath"]
        if point.get("maps_degraded") or point.get("maps_failed")
    }
    if rounds:
        (faults,) = influx.query_tagged([queries.multipath_faults_statement(rounds)], epoch="ms")
        for point in faults:
            server = point.get("server", "")
            # Only the maps of the server's newest round: a repaired path is not reported.
            if point["time"] >= rounds.get(server, 0):
                metrics.multipath_faults.setdefault(server, []).append(point)
    for name, found in (("bmc_power", metrics.power), ("bmc_power_ok", metrics.power_ok)):
        for point in answers[name]:
            newest = found.get(point["server"])
            if newest is None or point["time"] > newest["time"]:
                found[point["server"]] = point


def read_metrics(silence_seconds: float) -> Metrics:
    """One request to InfluxDB for everything the rules need; raises ``influx.InfluxError``."""
    statements = {
        **queries.metric_statements(silence_seconds),
        **queries.signal_statements(silence_seconds),
    }
    results = influx.query_tagged(list(statements.values()), epoch="ms")
    answers = dict(zip(statements, results, strict=True))
    metrics = Metrics()
    for point in answers["sensor"]:
        metrics.sensor_seen[point["server"]] = point["time"] / 1000
    read_signals(answers, metrics)
    for point in answers["node"]:
        metrics.node.setdefault(point["server"], []).append(point)
    for point in answers["bmc_seen"]:
        metrics.bmc_seen[point["server"]] = point["time"] / 1000
    for point in answers["bmc"]:
        metrics.bmc.setdefault(point["server"], []).append(point)
    for point in answers["ost"] + answers["mdt"]:
        if not point.get("target") or not point.get("server"):
            continue
        metrics.targets.setdefault(schema.point_label(point), []).append(point)
        seconds = point["time"] / 1000
        if seconds > metrics.target_round.get(point["server"], 0):
            metrics.target_round[point["server"]] = seconds
    # Both servers of a pair may report its arrays; their rounds share the tick's time. A
    # fault counts while it is in the array's newest round, whoever reported it.
    rounds: dict[str, int] = {}
    for point in answers["array_rounds"]:
        array = point.get("array", "")
        rounds[array] = max(rounds.get(array, 0), point["time"])
        metrics.array_seen[array] = rounds[array] / 1000
    faults = answers["group_faults"]
    degraded = sorted({p.get("array", "") for p in faults if p["time"] >= _round(rounds, p)})
    if degraded:
        (drives,) = influx.query_tagged(
            [queries.drive_faults_statement(degraded, silence_seconds)], epoch="ms"
        )
        faults = faults + drives
    for point in answers["array_rounds"] + faults:
        if point["time"] < _round(rounds, point):
            continue  # not in the array's newest round: fixed since
        key = (point.get("component", ""), point.get("id", ""))
        components = metrics.arrays.setdefault(point.get("array", ""), {})
        if key not in components or components[key]["time"] < point["time"]:
            components[key] = point
    return metrics


def _round(rounds: dict[str, int], point: dict) -> int:
    """Time of the newest round that reported the point's array."""
    return rounds.get(point.get("array", ""), 0)


# --- facts ------------------------------------------------------------------------------------


def gather_facts(
    now: float | None = None,
    thresholds: rules.Thresholds | None = None,
    metrics: Metrics | None = None,
) -> rules.RackFacts:
    now = time.time() if now is None else now
    thresholds = thresholds or HealthSettings.load().thresholds()
    if metrics is None:
        metrics = read_metrics(thresholds.sensor_silence_seconds)
    facts = rules.RackFacts(now=now, thresholds=thresholds)

    # Only the fields the rules use: a pair's plan and a server's NIDs are large JSON.
    pairs = list(
        ServerPair.objects.only("id", "name", "kind", "filesystem_id").prefetch_related(
            Prefetch("servers", queryset=Server.objects.only("id", "hostname", "role", "pair_id"))
        )
    )
    ssus = {
        pair_id: (pk, name)
        for pk, pair_id, name in SSU.objects.values_list("pk", "pair_id", "name")
    }
    ssu_names = {pair_id: name for pair_id, (_, name) in ssus.items()}
    arrays_by_pair: dict[int, list[StorageArray]] = defaultdict(list)
    for array in StorageArray.objects.all():
        arrays_by_pair[array.pair_id].append(array)
    groups = {
        group.pk: group
        for group in VolumeGroup.objects.only("id", "name", "raid", "array_id").order_by("name")
    }
    # One map of the drives of every array that reports a faulty one, for the whole round.
    drives = DriveMap({array for array, _, _ in _lost_drives(metrics)})
    group_facts = _volume_group_facts(groups, metrics, drives)
    groups_by_array: dict[int, list[int]] = defaultdict(list)
    for pk, group in groups.items():
        groups_by_array[group.array_id].append(pk)
    # Multipath maps are named after their targets' volumes (the target label).
    arrays_by_pk = {a.pk: a.name for arrays in arrays_by_pair.values() for a in arrays}
    device_arrays: dict[str, str] = {}
    targets_by_pair: dict[int, list[Target]] = defaultdict(list)
    for target in (
        Target.objects.select_related("primary_server", "failover_server", "filesystem")
        .only(
            "label",
            "kind",
            "index",
            "state",
            "volume_group_id",
            "filesystem__name",
            "primary_server__hostname",
            "primary_server__pair_id",
            "failover_server__hostname",
        )
        .order_by("kind", "index")
    ):
        targets_by_pair[target.primary_server.pair_id].append(target)
        group = groups.get(target.volume_group_id)
        if group is not None:
            device_arrays[target.label] = arrays_by_pk.get(group.array_id, "")

    filesystems = {
        fs.pk: rules.FilesystemFacts(fs.name, key=object_key(fs)) for fs in Filesystem.objects.all()
    }
    windows = {
        window.server_id: window
        for window in Maintenance.objects.filter(ended__isnull=True).only(
            "server_id", "ends", "reason"
        )
    }
    # The MDS pair first, then the SSUs in name order.
    pairs.sort(key=lambda pair: (pair.kind != PairKind.MDS, ssu_names.get(pair.pk, pair.name)))
    for pair in pairs:
        servers = [
            _server_facts(server.hostname, server.role, metrics, now, thresholds)
            for server in sorted(pair.servers.all(), key=lambda s: s.hostname)
        ]
        for server, row in zip(
            servers, sorted(pair.servers.all(), key=lambda s: s.hostname), strict=True
        ):
            server.key = object_key(row)
            window = windows.get(row.pk)
            if window is not None:
                ends = timezone.localtime(window.ends)
                late = (
                    " (overdue: its alerts are no longer silenced)"
                    if window.ends < timezone.now()
                    else ""
                )
                server.maintenance = f"until {ends:%Y-%m-%d %H:%M}{late}: {window.reason}"
        for server in servers:
            signal_facts(server, metrics, device_arrays, thresholds.sensor_silence_seconds)
        targets = [
            _target_facts(t, metrics, group_facts, now, thresholds.sensor_silence_seconds)
            for t in targets_by_pair[pair.pk]
        ]
        _infer_mgs(targets)
        arrays = [
            _array_facts(array, groups_by_array[array.pk], group_facts, metrics, drives)
            for array in sorted(arrays_by_pair[pair.pk], key=lambda a: a.name)
        ]
        unit = rules.UnitFacts(
            kind="ssu" if pair.pk in ssu_names else "pair",
            name=ssu_names.get(pair.pk, pair.name),
            pair=rules.PairFacts(pair.name, pair.kind, servers, key=object_key(pair)),
            arrays=arrays,
            targets=targets,
            # The MDS pair is its own unit (the tree has no node above it but the filesystem).
            key=f"ssu:{ssus[pair.pk][0]}" if pair.pk in ssus else object_key(pair),
        )
        filesystems[pair.filesystem_id].units.append(unit)
    facts.filesystems = sorted(filesystems.values(), key=lambda fs: fs.name)
    return facts


def object_key(row: models.Model) -> str:
    """The stable key of an inventory object in the health cache and history: its model and
    primary key ("target:12"), so a status follows its object, not a name."""
    return f"{row._meta.model_name}:{row.pk}"


def node_name(target: Target) -> str:
    """The target's name in the health tree: its label, made unique for the MGS."""
    if target.kind == TargetKind.MGT:
        return schema.mgs_label(target.filesystem.name)
    return target.label


def inventory_label(target: rules.TargetFacts) -> str:
    """The inventory's label of a target of the tree (``node_name`` backwards)."""
    if target.kind == TargetKind.MGT and schema.is_mgs_label(target.label):
        fs, _ = schema.split_label(target.label)
        return schema.target_label(fs, TargetKind.MGT.value)
    return target.label


def observations(facts: rules.RackFacts) -> tuple[dict, dict, dict]:
    """What the servers and arrays report, for the inventory (``record_observations``):
    where each target runs, each volume group's state and each lost drive's. Only what a
    sensor heard lately counts: a silent server's targets are not called unmounted."""
    silence = facts.thresholds.sensor_silence_seconds

    def fresh(seen: float | None) -> bool:
        return seen is not None and facts.now - seen <= silence

    placements: dict[str, str | None] = {}
    groups: dict[tuple[str, str], str] = {}
    drives: dict[tuple[str, str], str] = {}
    for filesystem in facts.filesystems:
        for unit in filesystem.units:
            heard = {s.hostname for s in unit.pair.servers if fresh(s.last_seen)}
            for target in unit.targets:
                if not target.in_service and not target.served_by:
                    continue
                if target.served_by or {target.primary, target.failover} & heard:
                    placements[inventory_label(target)] = target.served_by
            for array in unit.arrays:
                if not fresh(array.last_seen):
                    continue
                for group in array.volume_groups:
                    # Only groups with a fault are read: the others report "optimal".
                    groups[(array.name, group.name)] = group.state or "optimal"
                    drives.update(((array.name, d.ident), d.state) for d in group.lost_drives)
                drives.update(((array.name, d.ident), d.state) for d in array.lost_spares)
    return placements, groups, drives


def follow_inventory(facts: rules.RackFacts) -> int:
    """Keep the inventory saying what the rack reports; return how many rows changed."""
    placements, groups, drives = observations(facts)
    fresh_arrays = {array for array, _ in groups}
    # Drives the inventory still holds as lost that no array reports so any more: repaired.
    for drive in Drive.objects.filter(
        state__in=[DriveState.FAILED, DriveState.REBUILDING],
        enclosure__array__name__in=fresh_arrays,
    ).select_related("enclosure__array"):
        ident = f"{drive.enclosure.position},{drive.drawer},{drive.slot}"
        drives.setdefault((drive.enclosure.array.name, ident), "optimal")
    return record_observations(placements=placements, group_states=groups, drive_states=drives)


def _server_facts(
    hostname: str, role: str, metrics: Metrics, now: float, limits: rules.Thresholds
) -> rules.ServerFacts:
    server = rules.ServerFacts(hostname=hostname, role=role)
    server.last_seen = metrics.sensor_seen.get(hostname)
    rounds = metrics.node.get(hostname, [])
    if rounds:
        newest = rounds[0]
        if newest.get("lustre_healthy") is not None:
            server.lustre_healthy = bool(newest["lustre_healthy"])
        total, available = newest.get("mem_total_kb"), newest.get("mem_available_kb")
        if total and available is not None:
            server.memory_available_percent = 100.0 * available / total
        if len(rounds) >= 2:
            server.cpu_idle_percent = _cpu_idle(rounds[1], rounds[0])
    server.bmc_last_seen = metrics.bmc_seen.get(hostname)
    for point in metrics.bmc.get(hostname, []):
        server.bmc_readings.append(
            rules.BmcReading(
                sensor=point.get("sensor", "?"),
                type=point.get("type", "other"),
                value=point.get("value"),
                ok=point.get("ok", 1) != 0,
                upper_nc=point.get("upper_nc"),
                upper_cr=point.get("upper_cr"),
            )
        )
    return server


def signal_facts(
    server: rules.ServerFacts, metrics: Metrics, device_arrays: dict, silence_seconds: float
) -> None:
    """The server's redundant paths as its own tools reported them last, and its power as its
    BMC answered the partner."""
    cluster = metrics.cluster.get(server.hostname)
    if cluster:
        server.cluster_running = cluster.get("running") != 0
        if cluster.get("rings_faulty") is not None:
            server.heartbeat_up = cluster["rings_faulty"] == 0
        if cluster.get("peers_total"):
            server.partner_heard = (cluster.get("peers_connected") or 0) > 0
    lnet = metrics.lnet_state.get(server.hostname)
    if lnet and (lnet.get("nets_down") or 0) + (lnet.get("nets_up") or 0) > 0:
        # No network at all is LNet not configured yet (before provisioning), not a link.
        server.lnet_up = not lnet.get("nets_down")
    if lnet and lnet.get("peers_pinged"):
        server.lnet_partner_ping = lnet.get("peer_ping_ok") == lnet["peers_pinged"]
    # Per array, as many paths as its maps have, as many down as the worst map lost.
    totals: dict[str, int] = {}
    failed: dict[str, int] = {}
    for point in metrics.multipath_faults.get(server.hostname, []):
        array = device_arrays.get(point.get("device", "")) or f"device {point.get('device')}"
        totals[array] = max(totals.get(array, 0), point.get("paths_total") or 0)
        failed[array] = max(failed.get(array, 0), point.get("paths_failed") or 0)
    for array, total in totals.items():
        for number in range(1, total + 1):
            server.sas_paths[f"{array}/{number}"] = number > failed[array]
    power = metrics.power.get(server.hostname)
    answered = metrics.power_ok.get(server.hostname)
    if power and not power.get("answered") and answered:
        if power["time"] - answered["time"] <= silence_seconds * 1000:
            power = answered  # it answered lately: a missed poll is not a dead BMC
    if power:
        server.power_answered = bool(power.get("answered"))
        server.power_polled_by = power.get("polled_by")
        if power.get("power_on") is not None:
            server.power_on = bool(power["power_on"])


def _cpu_idle(older: dict, newer: dict) -> float | None:
    deltas = [
        (newer.get(name) or 0) - (older.get(name) or 0)
        for name in schema.CPU_FIELDS
        if newer.get(name) is not None
    ]
    busy_total = sum(delta for delta in deltas if delta > 0)
    if busy_total <= 0 or newer.get("cpu_idle") is None or older.get("cpu_idle") is None:
        return None
    return 100.0 * max(0, newer["cpu_idle"] - older["cpu_idle"]) / busy_total


def _target_facts(
    target: Target,
    metrics: Metrics,
    group_facts: dict[int, rules.VolumeGroupFacts],
    now: float,
    silence_seconds: float,
) -> rules.TargetFacts:
    facts = rules.TargetFacts(
        label=node_name(target),
        kind=target.kind,
        primary=target.primary_server.hostname,
        failover=target.failover_server.hostname,
        in_service=target.state not in NOT_IN_SERVICE,
        volume_group=group_facts.get(target.volume_group_id),
        key=object_key(target),
    )
    # Mounted on a server when that server's newest round, if recent, includes it.
    newest = None
    for point in metrics.targets.get(target.label, []):
        seconds = point["time"] / 1000
        if seconds < metrics.target_round.get(point["server"], 0):
            continue  # an older round: unmounted there since
        if now - seconds > silence_seconds:
            continue  # that server's sensor has gone silent: we do not know
        if (
            newest is None
            or point["time"] > newest["time"]
            or (point["time"] == newest["time"] and point["server"] == facts.primary)
        ):
            newest = point
    if newest is not None:
        facts.served_by = newest["server"]
        facts.kbytes_total = newest.get("kbytes_total")
        facts.kbytes_free = newest.get("kbytes_free")
        facts.kbytes_avail = newest.get("kbytes_avail")
    return facts


def _infer_mgs(targets: list[rules.TargetFacts]) -> None:
    """Sensors report MDTs and OSTs, not the MGS: it runs where the MDT on its group runs."""
    for mgs in (t for t in targets if t.kind == TargetKind.MGT and t.served_by is None):
        for other in targets:
            if other is not mgs and other.volume_group is mgs.volume_group and other.served_by:
                mgs.served_by = other.served_by
                break


def _redundancy(raid: str) -> int:
    raid = raid.lower().replace("raid", "")
    match = re.fullmatch(r"(\d+)\+(\d+)", raid)
    if match:
        data, parity = int(match.group(1)), int(match.group(2))
        return 1 if data == parity else parity
    return {"6": 2, "5": 1, "1": 1, "10": 1}.get(raid, 1)


def _volume_group_facts(
    groups: dict[int, VolumeGroup], metrics: Metrics, drives: DriveMap
) -> dict[int, rules.VolumeGroupFacts]:
    facts = {
        pk: rules.VolumeGroupFacts(name=group.name, redundancy=_redundancy(group.raid))
        for pk, group in groups.items()
    }
    by_name = {group.name: pk for pk, group in groups.items()}
    for components in metrics.arrays.values():
        for (component, ident), point in components.items():
            if component == "volume_group" and ident in by_name:
                facts[by_name[ident]].state = str(point.get("state") or "")
    for array_name, ident, state in _lost_drives(metrics):
        location, drive = drives.find(array_name, ident)
        group_pk = drive.volume_group_id if drive else None
        if group_pk in facts and _is_lost(state):
            facts[group_pk].lost_drives.append(rules.DriveFacts(location, state, ident))
    return facts


def _lost_drives(metrics: Metrics) -> list[tuple[str, str, str]]:
    """(array, drive id, state) of every drive an array reports not ok."""
    return sorted(
        (array_name, ident, str(point.get("state") or "failed"))
        for array_name, components in metrics.arrays.items()
        for (component, ident), point in components.items()
        if component == "drive" and not point.get("ok", 1)
    )


def _is_lost(state: str) -> bool:
    state = state.lower()
    return state in rules.LOST_DRIVE_STATES or "fail" in state


def _array_facts(
    array: StorageArray,
    group_pks: list[int],
    group_facts: dict[int, rules.VolumeGroupFacts],
    metrics: Metrics,
    drives: DriveMap,
) -> rules.ArrayFacts:
    facts = rules.ArrayFacts(
        name=array.name, last_seen=metrics.array_seen.get(array.name), key=object_key(array)
    )
    components = metrics.arrays.get(array.name, {})
    for (component, ident), point in sorted(components.items()):
        if component == "controller":
            state = str(point.get("state") or "")
            facts.controllers[ident] = "optimal" if point.get("ok", 1) else (state or "failed")
    facts.volume_groups = [group_facts[pk] for pk in group_pks]
    lost_in_groups = {d.location for g in facts.volume_groups for d in g.lost_drives}
    for array_name, ident, state in _lost_drives(metrics):
        if array_name != array.name:
            continue
        location, drive = drives.find(array_name, ident)
        if (drive is None or drive.volume_group_id is None) and location not in lost_in_groups:
            facts.lost_spares.append(rules.DriveFacts(location, state, ident))
    return facts


# --- evaluation and the cache -----------------------------------------------------------------


@dataclass
class EvaluationResult:
    trees: list[rules.Node]
    changes: list[StatusChange]
    seconds: float
    objects: int


def evaluate(now: float | None = None) -> list[rules.Node]:
    """The trees as the rules see the rack now (nothing stored)."""
    return rules.evaluate(gather_facts(now))


def evaluate_and_store(now: float | None = None) -> EvaluationResult:
    started = time.perf_counter()
    facts = gather_facts(now)
    trees = rules.evaluate(facts)
    changes = store(trees)
    follow_inventory(facts)
    objects = sum(1 for tree in trees for _ in tree.walk())
    seconds = time.perf_counter() - started
    Evaluation.objects.update_or_create(
        pk=1,
        defaults={
            "finished": timezone.now(),
            "seconds": seconds,
            "objects_evaluated": objects,
            "changes": len(changes),
        },
    )
    return EvaluationResult(trees, changes, seconds, objects)


def cached_rows() -> dict[str, HealthStatus]:
    return {row.key: row for row in HealthStatus.objects.all()}


def node_key(node: rules.Node) -> str:
    """The node's inventory key; a node built without one (a test's) is known by its name."""
    return node.key or f"{node.kind}/{node.name}"


def store(
    trees: list[rules.Node], cached: dict[str, HealthStatus] | None = None
) -> list[StatusChange]:
    """Keep each node's colour; write a StatusChange for every colour that changed.

    A change is claimed by updating the row only if it still has the colour this evaluation
    read (``cached``), so a second evaluation that read the same rows at the same moment finds
    nothing left to claim and writes no duplicate.
    """
    moment = timezone.now()
    cached = cached_rows() if cached is None else cached
    seen: set[str] = set()
    changes: list[StatusChange] = []
    refreshed: dict[tuple[str, ...], list[HealthStatus]] = defaultdict(list)
    created: list[HealthStatus] = []
    for tree in trees:
        positions: dict[int, int] = defaultdict(int)
        for node, parent in tree.walk():
            key = node_key(node)
            if key in seen:
                continue  # the same object twice in the tree: keep the first
            seen.add(key)
            position = positions[id(parent)]
            positions[id(parent)] += 1
            place = {
                "parent_kind": parent.kind if parent else "",
                "parent_name": parent.name if parent else "",
                "parent_key": node_key(parent) if parent else "",
                "position": position,
            }
            row = cached.get(key)
            if row is None:
                created.append(
                    HealthStatus(
                        key=key,
                        kind=node.kind,
                        name=node.name,
                        status=node.status,
                        reasons=node.reasons,
                        summary=node.summary,
                        since=moment,
                        **place,
                    )
                )
                if node.status not in (Status.GREEN, Status.GREY):
                    changes.append(_change(node, "", moment))
                continue
            if row.status != node.status:
                claimed = HealthStatus.objects.filter(pk=row.pk, status=row.status).update(
                    name=node.name,
                    status=node.status,
                    reasons=node.reasons,
                    summary=node.summary,
                    since=moment,
                    **place,
                )
                if claimed == 1:
                    changes.append(_change(node, row.status, moment))
                continue
            # Only what differs is written, and only those fields: most rows stay as they
            # were, and of the others mostly a number of the summary moved. (A renamed object
            # keeps its row, under its new name.)
            wanted = {"name": node.name, "reasons": node.reasons, "summary": node.summary, **place}
            differ = tuple(name for name, value in wanted.items() if getattr(row, name) != value)
            if differ:
                for name in differ:
                    setattr(row, name, wanted[name])
                refreshed[differ].append(row)
    with transaction.atomic():
        if created:
            try:
                with transaction.atomic():
                    HealthStatus.objects.bulk_create(created)
            except IntegrityError:
                # Another evaluation created some first: add ours one by one, keep theirs.
                for row in created:
                    HealthStatus.objects.get_or_create(key=row.key, defaults=_fields(row))
        for differ, rows in refreshed.items():
            HealthStatus.objects.bulk_update(rows, list(differ), batch_size=500)
        gone = [row.pk for key, row in cached.items() if key not in seen]
        if gone:
            HealthStatus.objects.filter(pk__in=gone).delete()
        if changes:
            StatusChange.objects.bulk_create(changes)
    for change in changes:
        log.info("%s %s: %s -> %s", change.kind, change.name, change.old or "new", change.new)
    return changes


def _change(node: rules.Node, old: str, moment) -> StatusChange:
    return StatusChange(
        key=node_key(node),
        kind=node.kind,
        name=node.name,
        old=old,
        new=node.status,
        reasons=node.reasons,
        summary=node.summary,
        at=moment,
        # Leaving "not in service" (or appearing) is a first colour, not a change back.
        initial=old in ("", Status.GREY),
    )


def _fields(row: HealthStatus) -> dict:
    return {
        name: getattr(row, name)
        for name in (
            "kind",
            "name",
            "status",
            "reasons",
            "summary",
            "parent_kind",
            "parent_name",
            "parent_key",
            "position",
            "since",
        )
    }


# --- reading the cache ------------------------------------------------------------------------


def cached_trees() -> list[dict]:
    """The trees as last evaluated, from the cache: one query, no InfluxDB."""
    rows = list(HealthStatus.objects.order_by("position", "pk"))
    children: dict[str, list[HealthStatus]] = defaultdict(list)
    for row in rows:
        children[row.parent_key].append(row)

    def build(row: HealthStatus) -> dict:
        return {
            "key": row.key,
            "kind": row.kind,
            "name": row.name,
            "status": row.status,
            "reasons": row.reasons,
            "summary": row.summary,
            "since": row.since.isoformat(),
            "children": [build(child) for child in children.get(row.key, [])],
        }

    return [build(row) for row in children.get("", []) if row.kind == NodeKind.FILESYSTEM]


def last_checked():
    row = Evaluation.objects.filter(pk=1).first()
    return row.finished if row else None
