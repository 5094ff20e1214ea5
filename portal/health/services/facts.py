"""The facts of the health rules: the inventory and the newest points of the sensors
(``metrics``) turned into the plain facts of ``portal.health.rules``, and the inventory kept
saying what the rack reports (``follow_inventory``)."""

from __future__ import annotations

import re
import time
from collections import defaultdict
from functools import lru_cache
from typing import NamedTuple

from django.conf import settings
from django.db import models
from django.db.models import Prefetch
from django.utils import timezone

from metrics import quantities
from portal.health import registry, rules
from portal.health.models import Evaluation, HealthSettings
from portal.health.services.metrics import Metrics, read_metrics
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
from portal.jobs.choices import Mark
from portal.jobs.services import marking_jobs
from sensors import schema

# Targets that are not expected to be mounted yet.
NOT_IN_SERVICE = {TargetState.PLANNED, TargetState.FORMATTED}


class GroupRow(NamedTuple):
    """What the facts need of a volume group."""

    pk: int
    name: str
    raid: str
    array_id: int


class TargetRow(NamedTuple):
    """What the facts need of a target, as one row of one query."""

    pk: int
    label: str
    kind: str
    state: str
    volume_group_id: int | None
    filesystem: str
    primary: str
    pair_id: int
    failover: str

    COLUMNS = (
        "pk",
        "label",
        "kind",
        "state",
        "volume_group_id",
        "filesystem__name",
        "primary_server__hostname",
        "primary_server__pair_id",
        "failover_server__hostname",
    )


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
            Prefetch(
                "servers",
                queryset=Server.objects.only("id", "hostname", "role", "pair_id", "pdu_outlet"),
            )
        )
    )
    ssus = {
        pair_id: (pk, name)
        for pk, pair_id, name in SSU.objects.values_list("pk", "pair_id", "name")
    }
    ssu_names = {pair_id: name for pair_id, (_, name) in ssus.items()}
    arrays_by_pair: dict[int, list[StorageArray]] = defaultdict(list)
    for array in StorageArray.objects.only("id", "name", "pair_id", "management_a"):
        arrays_by_pair[array.pair_id].append(array)
    # Plain rows, not models: a 100-SSU rack has 2,000 groups and 2,400 targets, every round.
    groups = {
        row[0]: GroupRow(*row)
        for row in VolumeGroup.objects.order_by("name").values_list(*GroupRow._fields)
    }
    # One map of the drives of every array that reports a faulty one, for the whole round.
    lost = _lost_drives(metrics)
    drives = DriveMap({array for array, _, _ in lost})
    group_facts = _volume_group_facts(groups, metrics, drives, lost)
    lost_by_array: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for drive in lost:
        lost_by_array[drive[0]].append(drive)
    groups_by_array: dict[int, list[int]] = defaultdict(list)
    for pk, group in groups.items():
        groups_by_array[group.array_id].append(pk)
    # Multipath maps are named after their targets' volumes (the target label).
    arrays_by_pk = {a.pk: a.name for arrays in arrays_by_pair.values() for a in arrays}
    device_arrays: dict[str, str] = {}
    targets_by_pair: dict[int, list[TargetRow]] = defaultdict(list)
    for row in Target.objects.order_by("kind", "index").values_list(*TargetRow.COLUMNS).iterator():
        target = TargetRow(*row)
        targets_by_pair[target.pair_id].append(target)
        group = groups.get(target.volume_group_id)
        if group is not None:
            device_arrays[target.label] = arrays_by_pk.get(group.array_id, "")

    filesystems = {
        fs.pk: rules.FilesystemFacts(fs.name, key=object_key(fs)) for fs in Filesystem.objects.all()
    }
    # Servers in maintenance, as the app that keeps the windows (the console) registered them.
    windows = registry.maintenance_windows()
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
            pdu, _, outlet = row.pdu_outlet.rpartition(":")
            server.pdu = f"{pdu} outlet {outlet}" if pdu else row.pdu_outlet
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
            _array_facts(
                array,
                groups_by_array[array.pk],
                group_facts,
                metrics,
                drives,
                lost_by_array.get(array.name, []),
            )
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
    if any(a.management_a for arrays in arrays_by_pair.values() for a in arrays):
        facts.array_collector = array_collector_facts(metrics)
    facts.marks = job_marks(thresholds.sensor_silence_seconds)
    return facts


def array_collector_facts(metrics: Metrics) -> rules.ArrayCollectorFacts:
    """The array collector's rounds, from its `sensor` points (server=OSTARA_ARRAYS_SERVER)."""
    server = settings.OSTARA_ARRAYS_SERVER
    schedule = metrics.schedules.get(server, {})
    return rules.ArrayCollectorFacts(
        server=server,
        last_seen=metrics.sensor_seen.get(server),
        interval=metrics.interval(server, schema.ARRAY_MEASUREMENT.name),
        late=schedule.get("santricity_late"),
        run_seconds=schedule.get("santricity_seconds"),
    )


def job_marks(silence_seconds: float) -> dict[str, rules.Mark]:
    """The objects jobs act on now, or did until lately: for two sensor-silence periods after
    a job ends, until every sensor has reported what it left. The newest job's mark wins."""
    found: dict[str, rules.Mark] = {}
    for job in marking_jobs(2 * silence_seconds):
        for key, how in job.marks.items():
            found.setdefault(key, rules.Mark(job.pk, job.title, builds=how == Mark.BUILDS))
    return found


def object_key(row: models.Model) -> str:
    """The stable key of an inventory object in the health cache and history: its model and
    primary key ("target:12"), so a status follows its object, not a name."""
    return f"{row._meta.model_name}:{row.pk}"


def node_name(target: TargetRow) -> str:
    """The target's name in the health tree: its label, made unique for the MGS."""
    if target.kind == TargetKind.MGT:
        return schema.mgs_label(target.filesystem)
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
    sensor heard lately counts: a silent server's targets are not called unmounted, an array
    not heard within its own interval's silence is not read."""
    limits = facts.thresholds

    def fresh(seen: float | None, interval: float | None = None) -> bool:
        return seen is not None and facts.now - seen <= limits.silent_after(interval)

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
                if not fresh(array.last_seen, array.interval):
                    continue
                for group in array.volume_groups:
                    # Only groups with a fault are read: the others report "optimal".
                    groups[(array.name, group.name)] = group.state or "optimal"
                    drives.update(((array.name, d.ident), d.state) for d in group.lost_drives)
                    # A replaced drive is rebuilding until the array calls it optimal.
                    drives.update(((array.name, d.ident), d.state) for d in group.rebuilding_drives)
                drives.update(((array.name, d.ident), d.state) for d in array.lost_spares)
    return placements, groups, drives


class Followed:
    """What this process last recorded in the inventory. The same observations again are not
    compared with the inventory row by row (4,400 rows on a 100-SSU rack) while no other
    process has evaluated since (``Evaluation.finished`` is still this process's), and then
    only every ``FULL_CHECK_ROUNDS``th round, which also corrects what another writer changed."""

    FULL_CHECK_ROUNDS = 6

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.observed: tuple | None = None
        self.rounds = 0
        self.finished = None  # the Evaluation.finished this process wrote last

    def unchanged(self, observed: tuple) -> bool:
        self.rounds += 1
        if observed != self.observed or self.rounds % self.FULL_CHECK_ROUNDS == 0:
            return False
        last = Evaluation.objects.filter(pk=1).values_list("finished", flat=True).first()
        return last is not None and last == self.finished

    def recorded(self, observed: tuple) -> None:
        self.observed, self.rounds = observed, 0


FOLLOWED = Followed()


def follow_inventory(facts: rules.RackFacts) -> int:
    """Keep the inventory saying what the rack reports; return how many rows changed."""
    placements, groups, drives = observations(facts)
    observed = (placements, dict(groups), dict(drives))
    if FOLLOWED.unchanged(observed):
        return 0
    fresh_arrays = {array for array, _ in groups}
    # Drives the inventory still holds as lost that no array reports so any more: repaired.
    # Found by the drive, not the id's spelling ("0,2,6", "0.2.6"): a drive reported under
    # one spelling is not also called repaired under the other.
    found = DriveMap({array for array, _ in drives})
    reported = {
        drive.pk for drive in (found.find(array, ident)[1] for array, ident in drives) if drive
    }
    for drive in Drive.objects.filter(
        state__in=[DriveState.FAILED, DriveState.REBUILDING],
        enclosure__array__name__in=fresh_arrays,
    ).select_related("enclosure__array"):
        if drive.pk in reported:
            continue
        ident = f"{drive.enclosure.position},{drive.drawer},{drive.slot}"
        drives[(drive.enclosure.array.name, ident)] = "assigned"
    changed = record_observations(placements=placements, group_states=groups, drive_states=drives)
    FOLLOWED.recorded(observed)
    return changed


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
            server.memory_available_percent = quantities.percent(available, total)
        if len(rounds) >= 2:
            server.cpu_idle_percent = cpu_idle_percent(rounds[1], rounds[0])
            server.sensor_interval = (rounds[0]["time"] - rounds[1]["time"]) / 1000 or None
    server.bmc_last_seen = metrics.bmc_seen.get(hostname)
    server.bmc_interval = metrics.interval(hostname, schema.BMC.name)
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
    power = _answer(metrics, schema.BMC_POWER.name, server.hostname, silence_seconds)
    pdu = _answer(metrics, schema.PDU_POWER.name, server.hostname, silence_seconds)
    if pdu:
        server.pdu_answered = bool(pdu.get("answered"))
        server.pdu_polled_by = pdu.get("polled_by")
    if power:
        server.power_answered = bool(power.get("answered"))
        server.power_polled_by = power.get("polled_by")
        if power.get("power_on") is not None:
            server.power_on = bool(power["power_on"])


def _answer(metrics: Metrics, measurement: str, host: str, silence_seconds: float) -> dict | None:
    """The newest poll of a fencing level (``bmc_power``, ``pdu_power``) of ``host``; one that
    went unanswered counts only when no poll was answered lately (within the silence of the
    poller's interval): a missed poll is not a dead device."""
    polls, answered = {
        schema.BMC_POWER.name: (metrics.power, metrics.power_ok),
        schema.PDU_POWER.name: (metrics.pdu, metrics.pdu_ok),
    }[measurement]
    poll, good = polls.get(host), answered.get(host)
    if poll and not poll.get("answered") and good:
        interval = metrics.interval(poll.get("polled_by"), measurement)
        if poll["time"] - good["time"] <= rules.silent_after(silence_seconds, interval) * 1000:
            return good
    return poll


def cpu_idle_percent(older: dict, newer: dict) -> float | None:
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
    target: TargetRow,
    metrics: Metrics,
    group_facts: dict[int, rules.VolumeGroupFacts],
    now: float,
    silence_seconds: float,
) -> rules.TargetFacts:
    facts = rules.TargetFacts(
        label=node_name(target),
        kind=target.kind,
        primary=target.primary,
        failover=target.failover,
        in_service=target.state not in NOT_IN_SERVICE,
        volume_group=group_facts.get(target.volume_group_id),
        key=f"{Target._meta.model_name}:{target.pk}",
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


@lru_cache(maxsize=64)
def _redundancy(raid: str) -> int:
    """Drives a group of this RAID level can lose (a rack has a few levels, 2,000 groups)."""
    raid = raid.lower().replace("raid", "")
    match = re.fullmatch(r"(\d+)\+(\d+)", raid)
    if match:
        data, parity = int(match.group(1)), int(match.group(2))
        return 1 if data == parity else parity
    return {"6": 2, "5": 1, "1": 1, "10": 1}.get(raid, 1)


def _volume_group_facts(
    groups: dict[int, GroupRow],
    metrics: Metrics,
    drives: DriveMap,
    lost: list[tuple[str, str, str]],
) -> dict[int, rules.VolumeGroupFacts]:
    facts = {
        pk: rules.VolumeGroupFacts(name=group.name, redundancy=_redundancy(group.raid))
        for pk, group in groups.items()
    }
    by_name = {group.name: pk for pk, group in groups.items()}
    for components in metrics.arrays.values():
        for (component, ident), point in components.items():
            if component == "volume_group" and ident in by_name:
                group = facts[by_name[ident]]
                group.state = str(point.get("state") or "")
                group.operation = str(point.get("operation") or "")
                if point.get("progress") is not None:
                    group.progress = int(point["progress"])
    for array_name, ident, state in lost:
        location, drive = drives.find(array_name, ident)
        group_pk = drive.volume_group_id if drive else None
        if group_pk not in facts:
            continue
        if _is_lost(state):
            facts[group_pk].lost_drives.append(rules.DriveFacts(location, state, ident))
        else:
            # Not ok and not lost: a new drive the array writes the group's data onto.
            facts[group_pk].rebuilding_drives.append(rules.DriveFacts(location, state, ident))
    return facts


def _lost_drives(metrics: Metrics) -> list[tuple[str, str, str]]:
    """(array, drive id, state) of every drive an array reports not ok."""
    return sorted(
        (array_name, ident, str(point.get("state") or "failed"))
        for array_name, components in metrics.arrays.items()
        for (component, ident), point in components.items()
        if component == "drive" and not point.get("ok", 1)
    )


def _management(facts: rules.ArrayFacts, controllers: dict[str, list[dict]]) -> None:
    """Which controllers answered the array collector's newest round of the array, which
    refused it, and which went unanswered in its last two rounds: one round missed on a busy
    network is not a dead management port, and a controller not asked in the newest round (A
    answered) is not judged by an older one."""
    rounds = sorted({p["time"] for points in controllers.values() for p in points}, reverse=True)
    for controller, points in sorted(controllers.items()):
        newest = points[0]
        if newest["time"] != rounds[0]:
            continue
        if newest.get("refused"):
            facts.refused[controller] = str(newest["refused"])
        elif newest.get("answered"):
            facts.answered.append(controller)
        elif len(points) > 1 and points[1]["time"] == rounds[1] and not points[1].get("answered"):
            facts.unanswered.append(controller)


def _is_lost(state: str) -> bool:
    state = state.lower()
    return state in rules.LOST_DRIVE_STATES or "fail" in state


def _array_facts(
    array: StorageArray,
    group_pks: list[int],
    group_facts: dict[int, rules.VolumeGroupFacts],
    metrics: Metrics,
    drives: DriveMap,
    lost: list[tuple[str, str, str]],
) -> rules.ArrayFacts:
    """The array's controllers, groups and lost spares; ``lost``: its drives reported not ok."""
    facts = rules.ArrayFacts(
        name=array.name,
        last_seen=metrics.array_seen.get(array.name),
        interval=metrics.interval(
            metrics.array_reporter.get(array.name), schema.ARRAY_MEASUREMENT.name
        ),
        key=object_key(array),
        collected=bool(array.management_a),
    )
    components = metrics.arrays.get(array.name, {})
    for (component, ident), point in sorted(components.items()):
        if component == "controller":
            state = str(point.get("state") or "")
            facts.controllers[ident] = "optimal" if point.get("ok", 1) else (state or "failed")
    _management(facts, metrics.management.get(array.name, {}))
    facts.volume_groups = [group_facts[pk] for pk in group_pks]
    lost_in_groups = {d.location for g in facts.volume_groups for d in g.lost_drives}
    for array_name, ident, state in lost:
        location, drive = drives.find(array_name, ident)
        if (drive is None or drive.volume_group_id is None) and location not in lost_in_groups:
            facts.lost_spares.append(rules.DriveFacts(location, state, ident))
    return facts
