"""The health rules: facts about the rack in, a tree of coloured nodes with reasons out.

Plain Python with no Django import, so the rules can be read, tested and benchmarked on their
own. ``services.gather_facts`` builds the facts from the inventory and the latest metrics;
``evaluate`` turns them into one tree per filesystem:

    filesystem ─┬─ pair (the MDS pair) ─┬─ server ...
                │                       ├─ array ...
                │                       └─ target (MGT, MDT) ...
                └─ ssu ─┬─ pair ── server ...
                        ├─ array ...
                        └─ target (OST) ...

Colours follow DESIGN.md §7 and the failure matrix of §2. Green is as designed; orange is
working with less margin (on the failover partner, a degraded volume group, a warning
threshold, a lost redundant path); red is lost or about to be (not mounted anywhere, a failed
volume group, a server down or silent, a critical threshold). Grey is "not in service yet"
(planned, never reported) and never makes a parent worse. A parent takes the worst colour of its
children, with two exceptions that follow from high availability: a target served by its
partner is orange, not red, and so is a pair in which one server is down while the other serves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from metrics import quantities

GREY = "grey"
GREEN = "green"
ORANGE = "orange"
RED = "red"
SEVERITY = {GREY: 0, GREEN: 1, ORANGE: 2, RED: 3}

# How many reasons of its children a parent repeats; the rest are counted.
PARENT_REASONS = 8

# Drive and volume-group state words that mean "lost" (the drive no longer holds data).
LOST_DRIVE_STATES = {"failed", "missing", "removed", "offline", "unresponsive", "bypassed"}
VOLUME_GROUP_LEVELS = {
    "optimal": GREEN,
    "degraded": ORANGE,
    "critical": RED,
    "failed": RED,
    "offline": RED,
}


# --- facts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The limits an administrator can change (HealthSettings holds the saved values)."""

    capacity_warning_percent: float = 80.0
    capacity_critical_percent: float = 95.0
    # Temperatures by the kind of sensor, as BMCs name them (``temperature_kind``). A BMC's own
    # thresholds, when it reports them, come first. Defaults from server vendors' BMC
    # documentation: Dell iDRAC's system-board inlet warns at 42 °C and fails at 47 °C, its
    # exhaust at 70/75 °C; Intel and AMD server CPUs throttle near 95-100 °C (BMCs warn a few
    # degrees below); JEDEC rates DDR4/DDR5 DIMMs for 85 °C normal and 95 °C extended; power
    # supplies are rated for 50-60 °C of their own intake. The inlet default is stricter than
    # iDRAC's, toward ASHRAE's 35 °C recommended maximum.
    temperature_cpu_warning_c: float = 85.0
    temperature_cpu_critical_c: float = 95.0
    temperature_inlet_warning_c: float = 40.0
    temperature_inlet_critical_c: float = 45.0
    temperature_exhaust_warning_c: float = 70.0
    temperature_exhaust_critical_c: float = 75.0
    temperature_dimm_warning_c: float = 85.0
    temperature_dimm_critical_c: float = 95.0
    temperature_psu_warning_c: float = 65.0
    temperature_psu_critical_c: float = 75.0
    temperature_other_warning_c: float = 75.0
    temperature_other_critical_c: float = 90.0
    # Lower is worse for these two: a busy CPU, little free memory.
    cpu_idle_warning_percent: float = 10.0
    cpu_idle_critical_percent: float = 2.0
    memory_available_warning_percent: float = 10.0
    memory_available_critical_percent: float = 3.0
    # Lustre's allocator leaves round-robin past 17 % difference (qos_threshold_rr).
    ost_fill_spread_warning_percent: float = 17.0
    ost_fill_spread_critical_percent: float = 35.0
    # A sensor that has sent nothing for this long is silent (its server is not green).
    sensor_silence_seconds: float = 30.0


@dataclass
class DriveFacts:
    location: str  # "ssu01-a-e0 drawer 2 slot 5", as a person finds it in the rack
    state: str
    ident: str = ""  # as the array names it ("0,2,5")


@dataclass
class VolumeGroupFacts:
    name: str
    state: str | None = None  # as the array reports it; None when it has not reported
    lost_drives: list[DriveFacts] = field(default_factory=list)
    redundancy: int = 2  # drives it can lose: 2 for RAID-6 8+2, 1 for RAID-10 (per mirror)


@dataclass
class TargetFacts:
    label: str
    kind: str  # OST, MDT, MGT
    primary: str
    failover: str
    in_service: bool = True  # provisioned (mounted once); planned targets are not expected
    served_by: str | None = None  # the server whose latest sensor round reports the target
    volume_group: VolumeGroupFacts | None = None
    kbytes_total: int | None = None
    kbytes_free: int | None = None
    kbytes_avail: int | None = None
    key: str = ""  # the inventory object's stable key

    @property
    def space_kb(self) -> tuple[float, float] | None:
        """Used and available kB (``metrics.quantities``); None without a size."""
        return quantities.ost_used_and_available(
            self.kbytes_total, self.kbytes_free, self.kbytes_avail
        )

    @property
    def fill_percent(self) -> float | None:
        """Used share as `lfs df` computes it (``metrics.quantities``)."""
        return quantities.ost_fill_percent(self.kbytes_total, self.kbytes_free, self.kbytes_avail)


@dataclass
class BmcReading:
    sensor: str
    type: str  # temperature, fan, power, ...
    value: float | None
    ok: bool
    # The BMC's own upper non-critical and critical thresholds, when it reports them.
    upper_nc: float | None = None
    upper_cr: float | None = None


# Kinds of temperature sensor, by the words BMCs use in their names; the first match wins.
TEMPERATURE_KINDS = (
    ("inlet", ("inlet", "ambient", "intake", "front panel")),
    ("exhaust", ("exhaust", "outlet")),
    ("dimm", ("dimm", "memory", "mem ")),
    ("psu", ("ps1", "ps2", "psu", "power supply", "pwr supply")),
    ("cpu", ("cpu", "processor", "proc ", "socket", "core", "package")),
)
TEMPERATURE_LABELS = {
    "cpu": "CPU",
    "inlet": "inlet air",
    "exhaust": "exhaust air",
    "dimm": "DIMM",
    "psu": "power supply",
    "other": "other",
}


def temperature_kind(sensor: str) -> str:
    """``cpu``, ``inlet``, ``exhaust``, ``dimm``, ``psu`` or ``other`` for a BMC sensor name
    such as "CPU1 Temp", "Inlet Temp", "DIMM A1 Temp" or "PS1 Temperature"."""
    name = f" {sensor.lower()} "
    for kind, words in TEMPERATURE_KINDS:
        if any(word in name for word in words):
            return kind
    return "other"


def temperature_limits(reading: BmcReading, limits: Thresholds) -> tuple[float, float, str]:
    """Warning and critical level of one temperature reading, and whose they are."""
    kind = temperature_kind(reading.sensor)
    warning = getattr(limits, f"temperature_{kind}_warning_c")
    critical = getattr(limits, f"temperature_{kind}_critical_c")
    if reading.upper_nc is not None or reading.upper_cr is not None:
        warning = reading.upper_nc if reading.upper_nc is not None else warning
        critical = reading.upper_cr if reading.upper_cr is not None else critical
        return warning, max(warning, critical), "the BMC's threshold"
    return warning, critical, f"the {TEMPERATURE_LABELS[kind]} threshold"


@dataclass
class ServerFacts:
    hostname: str
    role: str = "oss"
    last_seen: float | None = None  # time of the sensor's latest round
    lustre_healthy: bool | None = None
    cpu_idle_percent: float | None = None
    memory_available_percent: float | None = None
    bmc_last_seen: float | None = None  # None: no BMC readings at all (not configured)
    bmc_readings: list[BmcReading] = field(default_factory=list)
    # What the server's own tools say of its redundant paths (sensors.redundancy); None: not
    # reported. A silent server keeps the facts of its last report.
    lnet_up: bool | None = None  # lnetctl net show: every network interface up
    lnet_partner_ping: bool | None = None  # lnetctl ping of the partner's NIDs answered
    # "array/path" -> up (multipath -ll), for the arrays whose paths are not all up.
    sas_paths: dict[str, bool] = field(default_factory=dict)
    heartbeat_up: bool | None = None  # corosync-cfgtool -s: no ring faulty
    cluster_running: bool | None = None  # corosync answers
    partner_heard: bool | None = None  # the partner is connected on at least one ring
    # The chassis power as the server's BMC answers its partner's poll (management network).
    power_answered: bool | None = None
    power_on: bool | None = None
    power_polled_by: str | None = None
    # An operator's open maintenance window (the console): "until 2026-11-23 16:00: reason".
    maintenance: str | None = None
    key: str = ""


@dataclass
class ArrayFacts:
    name: str
    last_seen: float | None = None
    controllers: dict[str, str] = field(default_factory=dict)  # "A" -> "optimal"
    # Drives that are lost but belong to no volume group (hot spares).
    lost_spares: list[DriveFacts] = field(default_factory=list)
    volume_groups: list[VolumeGroupFacts] = field(default_factory=list)
    key: str = ""


@dataclass
class PairFacts:
    name: str
    kind: str  # "mds" or "oss"
    servers: list[ServerFacts]
    key: str = ""


@dataclass
class UnitFacts:
    """An SSU (OSS pair, arrays, OSTs) or the MDS pair (servers, MDT array, MGT and MDT)."""

    kind: str  # "ssu" or "pair"
    name: str
    pair: PairFacts
    arrays: list[ArrayFacts] = field(default_factory=list)
    targets: list[TargetFacts] = field(default_factory=list)
    key: str = ""


@dataclass
class FilesystemFacts:
    name: str
    units: list[UnitFacts] = field(default_factory=list)
    key: str = ""


@dataclass
class RackFacts:
    now: float
    thresholds: Thresholds
    filesystems: list[FilesystemFacts] = field(default_factory=list)


# --- result -----------------------------------------------------------------------------------


@dataclass
class Node:
    kind: str  # filesystem, ssu, pair, server, array, target
    name: str
    status: str = GREEN
    reasons: list[str] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    # Numbers a page shows next to the colour (fill, current server); not part of the colour.
    summary: dict = field(default_factory=dict)
    # The inventory object's stable key (``facts.object_key``): what the cache is keyed by.
    key: str = ""

    def raise_to(self, status: str, reason: str | None = None) -> None:
        if SEVERITY[status] > SEVERITY[self.status]:
            self.status = status
        if reason:
            self.reasons.append(reason)

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "reasons": list(self.reasons),
            "summary": dict(self.summary),
            "children": [child.as_dict() for child in self.children],
        }

    def walk(self, parent: Node | None = None):
        """Every node of the tree with its parent, parents first."""
        yield self, parent
        for child in self.children:
            yield from child.walk(self)


def worst(statuses) -> str:
    return max(statuses, key=SEVERITY.__getitem__, default=GREEN)


# --- rules ------------------------------------------------------------------------------------


def evaluate(facts: RackFacts) -> list[Node]:
    """One tree per filesystem."""
    return [_filesystem(fs, facts) for fs in facts.filesystems]


def _filesystem(fs: FilesystemFacts, facts: RackFacts) -> Node:
    node = Node("filesystem", fs.name, key=fs.key)
    node.children = [_unit(unit, facts) for unit in fs.units]
    targets = [t for unit in fs.units for t in unit.targets if t.kind == "OST"]
    lost = [
        t.label
        for t in targets
        if t.in_service and t.volume_group and _group_level(t.volume_group)[0] == "failed"
    ]
    if lost:
        node.raise_to(RED, f"{_names(lost)} lost: data striped over {_it_them(lost)} is gone")
    _filesystem_capacity(node, targets, facts.thresholds)
    _take_children(node)
    return node


def _filesystem_capacity(node: Node, osts: list[TargetFacts], limits: Thresholds) -> None:
    filled = [(t.label, t.fill_percent) for t in osts if t.fill_percent is not None]
    spaces = [t.space_kb for t in osts if t.fill_percent is not None]
    used = sum(space[0] for space in spaces)
    avail = sum(space[1] for space in spaces)
    percent = quantities.fill_percent(used, avail)
    if percent is not None:
        node.summary.update(fill_percent=round(percent, 1), kbytes_used=used, kbytes_avail=avail)
        _threshold_high(
            node,
            percent,
            limits.capacity_warning_percent,
            limits.capacity_critical_percent,
            lambda level, limit: f"filesystem {percent:.1f} % full ({level} at {limit:g} %)",
        )
    if len(filled) >= 2:
        fullest = max(filled, key=lambda item: item[1])
        emptiest = min(filled, key=lambda item: item[1])
        spread = fullest[1] - emptiest[1]
        node.summary["fill_spread_percent"] = round(spread, 1)
        _threshold_high(
            node,
            spread,
            limits.ost_fill_spread_warning_percent,
            limits.ost_fill_spread_critical_percent,
            lambda level, limit: (
                f"OST fill differs by {spread:.1f} points ({fullest[0]} {fullest[1]:.1f} %, "
                f"{emptiest[0]} {emptiest[1]:.1f} %; {level} at {limit:g}): Lustre stops "
                "allocating round-robin"
            ),
        )


def _unit(unit: UnitFacts, facts: RackFacts) -> Node:
    limits = facts.thresholds
    now = facts.now
    servers = {server.hostname: server for server in unit.pair.servers}
    in_service = any(t.in_service or t.served_by for t in unit.targets)
    server_nodes = [
        _server(server, unit, servers, in_service, now, limits) for server in servers.values()
    ]
    pair = _pair(unit.pair, server_nodes)
    arrays = [_array(array, in_service, now, limits) for array in unit.arrays]
    targets = [_target(target, servers, now, limits) for target in unit.targets]
    if unit.kind == "pair":
        pair.children += arrays + targets
        _take_children(pair, skip={id(child) for child in server_nodes})
        return pair
    node = Node("ssu", unit.name, children=[pair, *arrays, *targets], key=unit.key)
    _take_children(node)
    return node


def _pair(pair: PairFacts, server_nodes: list[Node]) -> Node:
    """A pair serves while one server does: one server red makes the pair orange, not red."""
    node = Node("pair", pair.name, children=list(server_nodes), key=pair.key)
    statuses = [child.status for child in server_nodes]
    serving = [child for child in server_nodes if child.status in (GREEN, ORANGE)]
    for child in server_nodes:
        if child.status == GREY:
            continue
        if child.status == RED and serving:
            others = ", ".join(other.name for other in serving)
            node.raise_to(ORANGE, f"{child.name} is not serving; {others} carries the pair")
            node.reasons += [f"{child.name}: {reason}" for reason in child.reasons]
        elif child.status != GREEN:
            node.raise_to(child.status)
            node.reasons += [f"{child.name}: {reason}" for reason in child.reasons]
    if server_nodes and all(status == RED for status in statuses):
        node.raise_to(RED, "no server of the pair is working")
    if all(status == GREY for status in statuses):
        node.status = GREY
    node.reasons = _limit(node.reasons)
    return node


def _server(
    server: ServerFacts,
    unit: UnitFacts,
    servers: dict[str, ServerFacts],
    unit_in_service: bool,
    now: float,
    limits: Thresholds,
) -> Node:
    node = Node("server", server.hostname, summary={"role": server.role}, key=server.key)
    silent = _silent(server, now, limits)
    partners = [other for name, other in servers.items() if name != server.hostname]
    if server.last_seen is None:
        if not unit_in_service:
            node.status = GREY
            node.reasons.append("not in service yet: its sensor has not reported")
            return node
        node.raise_to(RED, _powered(server, "its sensor has never reported"))
    elif silent:
        node.raise_to(
            RED,
            _powered(
                server,
                f"its sensor has sent nothing for {_duration(now - server.last_seen)} "
                f"(since {_clock(server.last_seen)})",
            ),
        )
    if silent:
        node.summary["silent"] = True  # structured flags for the alerts
        node.summary["down"] = True
    elif server.power_answered and server.power_on is False:
        # The BMC says the chassis is off: whatever still reports in its name (a sensor run
        # from elsewhere, as on the virtual rack) reads nothing of a running server.
        silent = True
        node.summary["down"] = True
        node.raise_to(
            RED,
            f"powered off (fenced, or shut down): its BMC answers {server.power_polled_by} "
            "with the chassis off",
        )
    own = [t for t in unit.targets if t.primary == server.hostname and t.in_service]
    moved = [t for t in own if t.served_by and t.served_by != server.hostname]
    if server.maintenance:
        # Taken out on purpose: its targets on the partner are the plan, not a failure.
        away = f"; {len(moved)} of its {len(own)} targets run on its partner" if moved else ""
        node.raise_to(ORANGE, f"in maintenance {server.maintenance}{away}")
    elif moved:
        where = ", ".join(sorted({t.served_by for t in moved}))
        if len(moved) == len(own):
            # Every one of its targets left it: it crashed, was fenced, or lost its SAS or LNet
            # paths, and the pair has no spare server left until it is back.
            node.raise_to(
                RED,
                f"all {len(own)} of its targets run on {where}: it was fenced or lost its "
                "service; fail back once the cause is fixed",
            )
        else:
            node.raise_to(
                ORANGE,
                f"{len(moved)} of its {len(own)} targets run on {where} "
                "(failed over; fail back when the cause is fixed)",
            )
    served = [t for t in unit.targets if t.served_by == server.hostname]
    node.summary["targets"] = len(served)
    if silent:
        # Its other readings are stale: only what its partner sees now, and the causes its
        # last report named (a server that lost its SAS paths or its heartbeat is fenced).
        for other in partners:
            if not _absent(other, now, limits) and other.partner_heard is False:
                node.reasons.append(f"{other.hostname} has lost the heartbeat (corosync) to it")
        for status, reason in _paths(server, partners, served, now, limits, last=True):
            node.raise_to(status, f"its last report: {reason}")
        return node
    if server.lustre_healthy is False:
        node.raise_to(RED, "Lustre's health_check reports NOT HEALTHY")
    for status, reason in _paths(server, partners, served, now, limits):
        node.raise_to(status, reason)
    stale_bmc = len(node.reasons)
    _bmc(node, server, now, limits)
    if server.power_answered is False and not any(
        "only the PDU" in reason for reason in node.reasons[stale_bmc:]
    ):
        node.raise_to(
            ORANGE,
            f"its BMC does not answer {server.power_polled_by} over the management network: "
            + (
                "with the heartbeat down too, it cannot be fenced"
                if server.heartbeat_up is False
                else "only the PDU can fence it"
            ),
        )
    if server.cpu_idle_percent is not None:
        node.summary["cpu_idle_percent"] = round(server.cpu_idle_percent, 1)
        _threshold_low(
            node,
            server.cpu_idle_percent,
            limits.cpu_idle_warning_percent,
            limits.cpu_idle_critical_percent,
            lambda level, limit: (
                f"CPU {server.cpu_idle_percent:.1f} % idle ({level} below {limit:g} %)"
            ),
        )
    if server.memory_available_percent is not None:
        node.summary["memory_available_percent"] = round(server.memory_available_percent, 1)
        _threshold_low(
            node,
            server.memory_available_percent,
            limits.memory_available_warning_percent,
            limits.memory_available_critical_percent,
            lambda level, limit: (
                f"{server.memory_available_percent:.1f} % of memory available "
                f"({level} below {limit:g} %)"
            ),
        )
    return node


def _silent(server: ServerFacts, now: float, limits: Thresholds) -> bool:
    return server.last_seen is None or now - server.last_seen > limits.sensor_silence_seconds


def _absent(server: ServerFacts, now: float, limits: Thresholds) -> bool:
    """Silent, or powered off as its BMC says: its partner's lost ring says nothing more."""
    return _silent(server, now, limits) or bool(server.power_answered and server.power_on is False)


def _powered(server: ServerFacts, silence: str) -> str:
    """A silent server's reason: what its BMC answered its partner, if it did."""
    if not server.power_answered or server.power_on is None:
        return f"{silence}: the server is down or not watched"
    if not server.power_on:
        return (
            f"powered off (fenced, or shut down): its BMC answers {server.power_polled_by} "
            f"with the chassis off; {silence}"
        )
    return (
        f"{silence}, while its BMC answers {server.power_polled_by} with the power on: "
        "hung or crashed, or its sensor stopped"
    )


def _paths(
    server: ServerFacts,
    partners: list[ServerFacts],
    served: list[TargetFacts],
    now: float,
    limits: Thresholds,
    last: bool = False,
) -> list[tuple[str, str]]:
    """(colour, reason) for each redundant path the server's own tools report lost. ``last``:
    a silent or powered-off server's last report, in which corosync not answering says only
    that the server went down."""
    found = []
    if server.lnet_up is False:
        unreachable = [
            p.hostname
            for p in partners
            if not _silent(p, now, limits) and p.lnet_partner_ping is False
        ]
        reason = "its LNet (public network) link is down (lnetctl net show)"
        if unreachable:
            reason += f"; {', '.join(unreachable)} cannot lnetctl ping it"
        found.append((RED if served else ORANGE, reason))
    if server.cluster_running is False and not last:
        found.append((ORANGE, "its cluster stack (corosync) does not answer: it cannot fail over"))
    elif server.heartbeat_up is False and all(not _absent(p, now, limits) for p in partners):
        # With the partner down the lost ring is the partner's absence, said on the partner.
        names = ", ".join(p.hostname for p in partners) or "its partner"
        found.append(
            (ORANGE, f"its heartbeat (corosync ring) to {names} is down: the pair cannot agree")
        )
    found += _sas_paths(server)
    return found


def _sas_paths(server: ServerFacts) -> list[tuple[str, str]]:
    by_array: dict[str, list[bool]] = {}
    for path, up in sorted(server.sas_paths.items()):
        by_array.setdefault(path.split("/")[0], []).append(up)
    found = []
    for array, paths in sorted(by_array.items()):
        down = paths.count(False)
        if not down:
            continue
        if down == len(paths):
            found.append(
                (
                    RED,
                    f"every SAS path to {array} is down (multipath): its targets fail over "
                    "after the multipath timeout",
                )
            )
        else:
            found.append(
                (
                    ORANGE,
                    f"{down} of its {len(paths)} SAS paths to {array} down (multipath): "
                    "multipath carries on over the other",
                )
            )
    return found


def _bmc(node: Node, server: ServerFacts, now: float, limits: Thresholds) -> None:
    if (
        server.bmc_last_seen is not None
        and now - server.bmc_last_seen > limits.sensor_silence_seconds
    ):
        node.raise_to(
            ORANGE,
            f"its BMC has not answered for {_duration(now - server.bmc_last_seen)}: "
            "only the PDU can fence it",
        )
        return
    hottest = None
    for reading in server.bmc_readings:
        if reading.type == "temperature" and reading.value is not None:
            if hottest is None or reading.value > hottest.value:
                hottest = reading
            warning, critical, whose = temperature_limits(reading, limits)
            if reading.value >= warning:
                node.summary["hot"] = True  # a structured flag for the alerts
            _threshold_high(
                node,
                reading.value,
                warning,
                critical,
                lambda level, limit, r=reading, whose=whose: (
                    f"{r.sensor} at {r.value:g} °C ({level} at {limit:g} °C, {whose})"
                ),
            )
        elif not reading.ok:
            node.raise_to(ORANGE, f"BMC sensor {reading.sensor} ({reading.type}) reports a fault")
    if hottest is not None:
        node.summary["temperature_c"] = hottest.value


def _array(array: ArrayFacts, in_service: bool, now: float, limits: Thresholds) -> Node:
    node = Node("array", array.name, key=array.key)
    if array.last_seen is None:
        if not in_service:
            node.status = GREY
            node.reasons.append("not in service yet: no state reported")
        else:
            node.raise_to(ORANGE, "its state is unknown: no sensor reports it")
        return node
    if now - array.last_seen > limits.sensor_silence_seconds:
        node.raise_to(
            ORANGE,
            f"its state is unknown: last reported {_duration(now - array.last_seen)} ago",
        )
    failed = sorted(name for name, state in array.controllers.items() if state != "optimal")
    working = sorted(name for name, state in array.controllers.items() if state == "optimal")
    if failed and working:
        node.raise_to(
            ORANGE,
            f"controller {', '.join(failed)} has failed "
            f"({', '.join(array.controllers[c] for c in failed)}): "
            f"controller {', '.join(working)} serves every volume",
        )
    elif failed:
        node.raise_to(RED, "no RAID controller is working: every volume is offline")
    for group in array.volume_groups:
        level, sentence = _group_level(group)
        if level != "optimal":
            node.raise_to(VOLUME_GROUP_LEVELS.get(level, ORANGE), sentence)
    for spare in array.lost_spares:
        node.raise_to(ORANGE, f"hot spare {spare.location} is {spare.state}")
    return node


def _group_level(group: VolumeGroupFacts) -> tuple[str, str]:
    """(optimal/degraded/critical/failed, a sentence naming the group and its lost drives)."""
    # As the arrays count: drives missing with their drawer come back when it is pushed in, so
    # only failed drives make a group critical; any loss beyond the redundancy fails it.
    lost = len(group.lost_drives)
    failed = sum(1 for drive in group.lost_drives if "fail" in drive.state.lower())
    if lost > group.redundancy:
        by_drives = "failed"
    elif failed and failed >= group.redundancy:
        by_drives = "critical"
    elif lost:
        by_drives = "degraded"
    else:
        by_drives = "optimal"
    reported = (group.state or "optimal").lower()
    if reported not in VOLUME_GROUP_LEVELS:
        reported = "degraded"  # a state word we do not know is not "as designed"
    order = ["optimal", "degraded", "critical", "failed"]
    level = max(by_drives, "failed" if reported == "offline" else reported, key=order.index)
    drives = "; ".join(f"drive {d.location} {d.state}" for d in group.lost_drives)
    if level == "failed":
        sentence = f"volume group {group.name} has failed"
        sentence += f" ({drives})" if drives else ""
        sentence += ": the target on it is lost"
    elif level == "critical":
        sentence = f"volume group {group.name} is critical"
        sentence += f" ({drives})" if drives else ""
        sentence += ": no redundancy left"
    elif level == "degraded":
        sentence = f"volume group {group.name} is degraded"
        sentence += f": {drives}" if drives else " (rebuilding or a drive missing)"
    else:
        sentence = f"volume group {group.name} is optimal"
    return level, sentence


def _target(
    target: TargetFacts, servers: dict[str, ServerFacts], now: float, limits: Thresholds
) -> Node:
    node = Node("target", target.label, summary={"kind": target.kind}, key=target.key)
    if target.served_by:
        node.summary["server"] = target.served_by
    if not target.in_service and not target.served_by:
        node.status = GREY
        node.reasons.append("not in service yet")
        return node
    if target.served_by is None:
        silent = [
            name
            for name in (target.primary, target.failover)
            if name in servers
            and (
                servers[name].last_seen is None
                or now - servers[name].last_seen > limits.sensor_silence_seconds
            )
        ]
        sentence = "not mounted on any server"
        if silent:
            sentence += f" (no report from {', '.join(silent)})"
        node.raise_to(RED, sentence)
    elif target.served_by == target.failover:
        primary = servers.get(target.primary)
        if primary is not None and primary.maintenance:
            # Moved on purpose: no "on its failover server" alert; a real fault still shows.
            node.raise_to(
                ORANGE,
                f"served by its failover server {target.failover} while its primary "
                f"{target.primary} is in maintenance",
            )
        else:
            node.summary["on_partner"] = True  # a structured flag for the alerts
            node.raise_to(
                ORANGE,
                f"served by its failover server {target.failover}, not its primary "
                f"{target.primary}",
            )
    elif target.served_by != target.primary:
        node.raise_to(
            ORANGE,
            f"mounted on {target.served_by}, which is neither its primary nor its failover server",
        )
    if target.volume_group is not None:
        level, sentence = _group_level(target.volume_group)
        if level != "optimal":
            node.summary["volume_group"] = level  # a structured flag for the alerts
            node.raise_to(VOLUME_GROUP_LEVELS[level], sentence)
    fill = target.fill_percent
    if fill is not None:
        node.summary["fill_percent"] = round(fill, 1)
        if fill >= limits.capacity_warning_percent:
            node.summary["full"] = True  # a structured flag for the alerts
        _threshold_high(
            node,
            fill,
            limits.capacity_warning_percent,
            limits.capacity_critical_percent,
            lambda level, limit: f"{fill:.1f} % full ({level} at {limit:g} %)",
        )
    return node


# --- helpers ----------------------------------------------------------------------------------


# Whose reasons a parent repeats first: the same sentence from an array and from its target
# is said once, by the target.
REASON_ORDER = {"pair": 0, "server": 1, "ssu": 2, "target": 3, "array": 4}


def _take_children(node: Node, skip: set | None = None) -> None:
    """Worst of the children, with their reasons named, after the node's own."""
    skip = skip or set()
    own = list(node.reasons)
    # Its colour before its children's: an alert on "red" mails the object that is the cause,
    # not every parent that repeats it.
    node.summary["own_status"] = node.status
    inherited: list[str] = []
    said: set[str] = set()
    statuses = [child.status for child in node.children]
    for child in sorted(node.children, key=lambda c: REASON_ORDER.get(c.kind, 9)):
        if id(child) in skip or child.status in (GREEN, GREY):
            continue
        node.raise_to(child.status)
        for reason in child.reasons:
            sentence = reason.split(": ", 1)[1] if reason.startswith(f"{child.name}: ") else reason
            if reason in said or sentence in said:
                continue
            said.update((reason, sentence))
            # An SSU and its pair share a name: "ssu01: ssu01: ..." says nothing more.
            inherited.append(reason if child.name == node.name else f"{child.name}: {reason}")
    if statuses and all(status == GREY for status in statuses) and not own:
        node.status = GREY
    node.reasons = own + _limit(inherited, PARENT_REASONS - min(len(own), PARENT_REASONS - 1))


def _limit(reasons: list[str], keep: int = PARENT_REASONS) -> list[str]:
    if len(reasons) <= keep:
        return reasons
    return reasons[:keep] + [f"and {len(reasons) - keep} more"]


def _threshold_high(node: Node, value: float, warning: float, critical: float, say) -> None:
    if value >= critical:
        node.raise_to(RED, say("critical", critical))
    elif value >= warning:
        node.raise_to(ORANGE, say("warning", warning))


def _threshold_low(node: Node, value: float, warning: float, critical: float, say) -> None:
    if value < critical:
        node.raise_to(RED, say("critical", critical))
    elif value < warning:
        node.raise_to(ORANGE, say("warning", warning))


def _names(labels: list[str]) -> str:
    return ", ".join(labels[:4]) + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")


def _it_them(labels: list[str]) -> str:
    return "it" if len(labels) == 1 else "them"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def _clock(timestamp: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(timestamp))
