"""The facts the rules read: the rack's objects as the inventory and the newest metrics describe
them (``portal.health.services.facts`` builds them), and the thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field

from metrics import quantities


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

    def silent_after(self, interval: float | None) -> float:
        """When a collector that reports every ``interval`` seconds counts as silent."""
        return silent_after(self.sensor_silence_seconds, interval)


def silent_after(silence_seconds: float, interval: float | None) -> float:
    """Seconds without a report after which a collector that reports every ``interval`` seconds
    (a BMC once a minute) is silent: two intervals and a half (one report missed and the next
    late), never sooner than the sensor itself (``silence_seconds``); the sensor's own silence
    when the interval is not known."""
    if not interval:
        return silence_seconds
    return max(silence_seconds, 2.5 * interval)


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
    # Drives the array is writing the group's data onto (a replaced drive it reconstructs):
    # not lost, not yet holding their data.
    rebuilding_drives: list[DriveFacts] = field(default_factory=list)
    # The array's long-running operation on the group ("reconstruction", "copyback") and its
    # percentage, as the array reports them; "" and None when none runs.
    operation: str = ""
    progress: int | None = None


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
    sensor_interval: float | None = None  # seconds between its sensor's last two rounds
    lustre_healthy: bool | None = None
    cpu_idle_percent: float | None = None
    memory_available_percent: float | None = None
    bmc_last_seen: float | None = None  # None: no BMC readings at all (not configured)
    bmc_interval: float | None = None  # seconds between its BMC readings (its sensor says)
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
    # The second fencing level: its PDU outlet ("pdu1 outlet 3") as the fence agent's status
    # answers the partner's poll; None: not polled.
    pdu: str = ""
    pdu_answered: bool | None = None
    pdu_polled_by: str | None = None
    # An operator's open maintenance window (the console): "until 2026-11-23 16:00: reason".
    maintenance: str | None = None
    key: str = ""


@dataclass
class ArrayFacts:
    name: str
    last_seen: float | None = None
    interval: float | None = None  # seconds between its reports, as its collector runs
    controllers: dict[str, str] = field(default_factory=dict)  # "A" -> "optimal"
    # Controllers that did not answer on their management address the last time the array
    # collector asked them (its REST API), and those that did.
    unanswered: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    # Controller -> what it refused when it did answer: "account" (the monitor account) or
    # "certificate" (not the one pinned at provisioning).
    refused: dict[str, str] = field(default_factory=dict)
    # Read by the array collector (it has management addresses), not by its servers' SMcli.
    collected: bool = False
    # Drives that are lost but belong to no volume group (hot spares).
    lost_spares: list[DriveFacts] = field(default_factory=list)
    volume_groups: list[VolumeGroupFacts] = field(default_factory=list)
    key: str = ""


@dataclass
class ArrayCollectorFacts:
    """The array collector: the sensor with only its santricity collector, run by the
    ``ostara-arrays`` unit on the management server, as its own `sensor` points tell."""

    server: str  # where it runs, the `server` tag of its points (OSTARA_ARRAYS_SERVER)
    last_seen: float | None = None  # time of its newest round
    interval: float | None = None  # seconds between its runs of the arrays, as it says
    late: float | None = None  # seconds its last run went past its interval (0: on time)
    run_seconds: float | None = None  # how long its last run took


UNIT = "ostara-arrays"  # the systemd unit that runs the array collector


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


@dataclass(frozen=True)
class Mark:
    """A job acting on an object (``Job.marks``): it moves, stops or starts it, or builds it."""

    job: int
    title: str
    builds: bool = False


@dataclass
class RackFacts:
    now: float
    thresholds: Thresholds
    filesystems: list[FilesystemFacts] = field(default_factory=list)
    # The array collector, when an array has management addresses (None: SMcli reads all).
    array_collector: ArrayCollectorFacts | None = None
    # Object key ("server:3"; a pair's key marks its servers, arrays and targets) -> the job
    # that acts on it now or did lately.
    marks: dict[str, Mark] = field(default_factory=dict)
