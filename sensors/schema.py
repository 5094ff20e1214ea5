"""The metric schema (DESIGN.md §6), written once: measurement names, tag names, field names and
the target labels, for the sensor that writes the points and for the portal (health, charts,
Grafana dashboards) that reads them.

Standard library only: the sensor ships to every Lustre server with nothing else.

One measurement per kind of thing, tags for identity, fields for numbers. Counters are the raw
cumulative values the kernel reports. The Lustre op counters of `ost`, `mdt`, their `*_job`
twins and `oss_service` keep Lustre's own names and are not listed here (a new Lustre release
may add one); every other field is.

A target's label is `<fs>-<target>` (`scratch-OST0003`), as Lustre names its devices; points
carry the two parts as the tags `fs` and `target`. The MGT is not a device of a filesystem in
Lustre's naming (its device is `MGS`), so its label is made unique per filesystem as
`<fs>-MGS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sensors.config import COLLECTORS, DEFAULT_INTERVALS, EVERY_ROUND, FILE_INTERVALS

# --- tag names --------------------------------------------------------------------------------

SERVER = "server"
FS = "fs"
TARGET = "target"
SSU = "ssu"
PAIR = "pair"
ROLE = "role"
JOBID = "jobid"
SECTION = "section"
BUCKET = "bucket"
SERVICE = "service"
SENSOR = "sensor"
TYPE = "type"
ARRAY = "array"
COMPONENT = "component"
ID = "id"
DEVICE = "device"
POLLED_BY = "polled_by"
# The arrays' REST API (sensors.santricity): the objects an array's figures belong to.
VOLUME = "volume"
VOLUME_GROUP = "volume_group"
CONTROLLER = "controller"
INTERFACE = "interface"
PRIORITY = "priority"
EVENT_TYPE = "event_type"
# Owners (sensors.quota): `kind` is `user`, `group` or `project`, `id` the numeric id;
# `pool` the quota master's pool (`0x0`: the filesystem's own limits).
KIND = "kind"
POOL = "pool"
# A target's client, by its NID as Lustre names the export (`192.168.0.100@o2ib`).
CLIENT = "client"
# Kernel lines (sensors.kmsg): `lustre` or `lnet`; the syslog severity (`err`, `warning`,
# ...); Lustre's console message number (`11-0`, `167-0`) when the line has one.
SUBSYSTEM = "subsystem"
SEVERITY = "severity"
MESSAGE_NUMBER = "message_number"
OWNER_KINDS = ("user", "group", "project")

# --- fields -----------------------------------------------------------------------------------

# /proc/stat's aggregate `cpu` line, in its order (jiffies).
CPU_FIELDS = (
    "cpu_user",
    "cpu_nice",
    "cpu_system",
    "cpu_idle",
    "cpu_iowait",
    "cpu_irq",
    "cpu_softirq",
    "cpu_steal",
)
# /proc/meminfo names -> fields (kB).
MEMINFO_FIELDS = {
    "MemTotal": "mem_total_kb",
    "MemFree": "mem_free_kb",
    "MemAvailable": "mem_available_kb",
    "Buffers": "mem_buffers_kb",
    "Cached": "mem_cached_kb",
}
LOAD_FIELDS = ("load1", "load5", "load15")
LUSTRE_HEALTHY = "lustre_healthy"
# LNet `stats` names (sensors.parsers.LNET_STATS_FIELDS) -> fields; lengths are bytes.
LNET_COUNTER_FIELDS = {
    "msgs_alloc": "msgs_alloc",
    "msgs_max": "msgs_max",
    "errors": "errors",
    "send_count": "send_count",
    "recv_count": "recv_count",
    "route_count": "route_count",
    "drop_count": "drop_count",
    "send_length": "send_bytes",
    "recv_length": "recv_bytes",
    "route_length": "route_bytes",
    "drop_length": "drop_bytes",
}
# LNet's own view (`lnetctl net show`, `lnetctl ping`), in the same measurement.
LNET_STATE_FIELDS = ("nets_up", "nets_down", "peers_pinged", "peer_ping_ok")
# A target's capacity files -> fields.
CAPACITY_FILES = {
    "kbytestotal": "kbytes_total",
    "kbytesfree": "kbytes_free",
    "kbytesavail": "kbytes_avail",
    "filestotal": "files_total",
    "filesfree": "files_free",
}
CAPACITY_FIELDS = ("kbytes_total", "kbytes_free", "kbytes_avail")
# A target's single-value files -> fields.
TARGET_VALUE_FILES = {"num_exports": "num_exports", "eviction_count": "evictions"}
TRAFFIC_FIELDS = ("read_bytes", "read_calls", "write_bytes", "write_calls")
BRW_FIELDS = ("read_ios", "write_ios")
# brw_stats sections written as `brw` points. The ldiskfs-only sections and `block maps msec`
# are left out to keep the number of series down.
BRW_SECTIONS = (
    "pages_per_bulk_rw",
    "discontiguous_pages",
    "disk_ios_in_flight",
    "io_time",
    "disk_io_size",
)
# `value` and `ok` always; the BMC's own thresholds (`ipmitool sensor`) when it prints them.
BMC_FIELDS = ("value", "ok", "upper_nc", "upper_cr")
BMC_TYPES = ("temperature", "fan", "power", "voltage", "current", "other")
# A controller's point also counts its array's volume groups that are not ok in the same round
# (``GROUPS_NOT_OK``): the health engine reads the groups only of arrays that have such a one.
GROUPS_NOT_OK = "groups_not_ok"
ARRAY_FIELDS = ("state", "ok", "operation", "progress", GROUPS_NOT_OK)
ARRAY_COMPONENTS = ("drive", "volume_group", "controller")
# The array's own performance figures (SANtricity's analysed-*-statistics: averages over the
# array's last sampling interval): operations per second, MB/s, milliseconds, percent.
ARRAY_IO_FIELDS = ("read_iops", "write_iops", "read_mbps", "write_mbps")
ARRAY_VOLUME_FIELDS = (*ARRAY_IO_FIELDS, "read_latency_ms", "write_latency_ms")
ARRAY_DRIVE_FIELDS = ARRAY_VOLUME_FIELDS
ARRAY_CONTROLLER_FIELDS = (*ARRAY_IO_FIELDS, "cpu_percent", "cache_hit_percent")
ARRAY_INTERFACE_FIELDS = (*ARRAY_IO_FIELDS, "queue_depth")
# One point per Major Event Log entry, at the event's own time.
ARRAY_EVENT_FIELDS = ("sequence", "description")
ARRAY_EVENT_COMPONENTS = ("drive", "volume_group", "controller", "array")
ARRAY_EVENT_PRIORITIES = ("critical", "informational")
# Each controller asked for the array's state in a round: did it answer, in how long.
# `refused` (string): what a controller that answered refused, `account` or `certificate`.
ARRAY_MANAGEMENT_FIELDS = ("answered", "seconds", "refused")
CLUSTER_FIELDS = ("running", "rings_total", "rings_faulty", "peers_total", "peers_connected")
MULTIPATH_MAP_FIELDS = ("paths_total", "paths_active", "paths_failed")
MULTIPATH_SUMMARY_FIELDS = ("maps", "maps_degraded", "maps_failed")
BMC_POWER_FIELDS = ("answered", "power_on")
PDU_POWER_FIELDS = ("answered", "power_on")
OWNER_USAGE_FIELDS = ("kbytes", "inodes")
# The quota master's `dt` (KiB) and `md` (inode) limits of one owner; `time` as Lustre
# prints it (id 0: the grace period in seconds; an owner over its soft limit: the end of its
# grace, seconds since the epoch; else 0).
OWNER_QUOTA_FIELDS = tuple(
    f"{unit}_{key}" for unit in ("kbytes", "inodes") for key in ("hard", "soft", "granted", "time")
)
KERNEL_LOG_FIELDS = ("message", "sequence")
KERNEL_STORM_FIELDS = ("lines", "first_sequence", "last_sequence")
# Each round's kernel lines sent, counted but not sent (past the per-round bound), and lost
# (overwritten in the kernel's ring before they were read).
KERNEL_COUNT_FIELDS = ("kernel_lines", "kernel_lines_suppressed", "kernel_lines_lost")
# The collectors that run on an interval of their own (sensors.collect), and the seconds
# between their runs when the sensor does not say (its `<collector>_interval` field does).
SCHEDULED_COLLECTORS = tuple(name for name in COLLECTORS if name not in EVERY_ROUND)
COLLECTOR_INTERVALS = dict(DEFAULT_INTERVALS)
# Each one's last run's duration, seconds overdue (0 when its last run finished within its
# interval) and interval in effect.
SCHEDULE_SUFFIXES = ("seconds", "late", "interval")
# The files read on an interval of their own within the round (`usage`, `exports`) only
# report that interval: they are never late.
SCHEDULE_FIELDS = tuple(
    f"{name}_{suffix}"
    for name in SCHEDULED_COLLECTORS
    for suffix in (("interval",) if name in FILE_INTERVALS else SCHEDULE_SUFFIXES)
)
SENSOR_FIELDS = (
    "spooled_points",
    "dropped_points",
    "rejected_points",
    "parse_errors",
    "collect_seconds",
    "points",
    *KERNEL_COUNT_FIELDS,
    *SCHEDULE_FIELDS,
)

# --- measurements -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    """A measurement's name, its tags (besides the sensor's own static tags) and its fields
    (empty where the fields are Lustre's counter names)."""

    name: str
    tags: tuple[str, ...]
    fields: tuple[str, ...] = ()


_TARGET_TAGS = (FS, TARGET, SERVER)
OST = Measurement("ost", _TARGET_TAGS, TRAFFIC_FIELDS + tuple(CAPACITY_FILES.values()))
OST_JOB = Measurement("ost_job", (*_TARGET_TAGS, JOBID), TRAFFIC_FIELDS)
BRW = Measurement("brw", (*_TARGET_TAGS, SECTION, BUCKET), BRW_FIELDS)
MDT = Measurement("mdt", _TARGET_TAGS, tuple(CAPACITY_FILES.values()))
MDT_JOB = Measurement("mdt_job", (*_TARGET_TAGS, JOBID))
OSS_SERVICE = Measurement("oss_service", (SERVER, SERVICE))
NODE = Measurement(
    "node",
    (SERVER, ROLE),
    CPU_FIELDS + tuple(MEMINFO_FIELDS.values()) + LOAD_FIELDS + (LUSTRE_HEALTHY,),
)
LNET = Measurement("lnet", (SERVER,), tuple(LNET_COUNTER_FIELDS.values()) + LNET_STATE_FIELDS)
BMC = Measurement("bmc", (SERVER, SENSOR, TYPE), BMC_FIELDS)
ARRAY_MEASUREMENT = Measurement("array", (SERVER, ARRAY, COMPONENT, ID), ARRAY_FIELDS)
ARRAY_VOLUME = Measurement(
    "array_volume", (SERVER, ARRAY, VOLUME, VOLUME_GROUP), ARRAY_VOLUME_FIELDS
)
ARRAY_DRIVE = Measurement("array_drive", (SERVER, ARRAY, ID), ARRAY_DRIVE_FIELDS)
ARRAY_CONTROLLER = Measurement(
    "array_controller", (SERVER, ARRAY, CONTROLLER), ARRAY_CONTROLLER_FIELDS
)
ARRAY_INTERFACE = Measurement(
    "array_interface", (SERVER, ARRAY, CONTROLLER, INTERFACE), ARRAY_INTERFACE_FIELDS
)
ARRAY_EVENT = Measurement(
    "array_event", (SERVER, ARRAY, COMPONENT, ID, PRIORITY, EVENT_TYPE), ARRAY_EVENT_FIELDS
)
ARRAY_MANAGEMENT = Measurement(
    "array_management", (SERVER, ARRAY, CONTROLLER), ARRAY_MANAGEMENT_FIELDS
)
CLUSTER = Measurement("cluster", (SERVER,), CLUSTER_FIELDS)
# Each map's paths (tag `device`), and one summary point per round without it.
MULTIPATH = Measurement(
    "multipath", (SERVER, DEVICE), MULTIPATH_MAP_FIELDS + MULTIPATH_SUMMARY_FIELDS
)
BMC_POWER = Measurement("bmc_power", (SERVER, POLLED_BY), BMC_POWER_FIELDS)
# The second fencing level: the partner's PDU outlet, through the fence agent's own `status`.
PDU_POWER = Measurement("pdu_power", (SERVER, POLLED_BY), PDU_POWER_FIELDS)
# Who owns the data (sensors.quota): per target and owner, and the quota master's limits.
OWNER_USAGE = Measurement("owner_usage", (*_TARGET_TAGS, KIND, ID), OWNER_USAGE_FIELDS)
OWNER_QUOTA = Measurement("owner_quota", (FS, SERVER, POOL, KIND, ID), OWNER_QUOTA_FIELDS)
# Each target's clients: the per-export stats, fields named as the target's own.
OST_CLIENT = Measurement("ost_client", (*_TARGET_TAGS, CLIENT), TRAFFIC_FIELDS)
MDT_CLIENT = Measurement("mdt_client", (*_TARGET_TAGS, CLIENT))
# The kernel's Lustre and LNet lines (sensors.kmsg), one point each at the line's own time;
# `fs` and `target` when the message names one. Past the per-round bound: `kernel_storm`.
_KERNEL_TAGS = (SERVER, SUBSYSTEM, SEVERITY, MESSAGE_NUMBER, FS, TARGET)
KERNEL_LOG = Measurement("kernel_log", _KERNEL_TAGS, KERNEL_LOG_FIELDS)
KERNEL_STORM = Measurement("kernel_storm", _KERNEL_TAGS, KERNEL_STORM_FIELDS)
SENSOR_MEASUREMENT = Measurement("sensor", (SERVER,), SENSOR_FIELDS)

# The collectors that write a measurement on an interval of their own, the first a server runs
# first: how often a server reports it is that collector's `<collector>_interval` in its
# `sensor` point, or its default (COLLECTOR_INTERVALS). The array's state comes from the REST
# collector (`santricity`) or from SMcli (`array`).
MEASUREMENT_COLLECTORS = {
    BMC.name: ("bmc",),
    ARRAY_MEASUREMENT.name: ("santricity", "array"),
    BMC_POWER.name: ("partner_bmc",),
    PDU_POWER.name: ("partner_pdu",),
    MULTIPATH.name: ("multipath",),
    CLUSTER.name: ("cluster",),
    LNET.name: ("lnet",),
    OWNER_USAGE.name: ("usage",),
    OWNER_QUOTA.name: ("usage",),
    OST_CLIENT.name: ("exports",),
    MDT_CLIENT.name: ("exports",),
}


def interval_field(collector: str) -> str:
    """The `sensor` point's field with a collector's interval in effect (`bmc_interval`)."""
    return f"{collector}_interval"


def default_interval(measurement: str) -> float | None:
    """Seconds between a measurement's points when its sensor does not say; None: every
    round of the sensor."""
    collectors = MEASUREMENT_COLLECTORS.get(measurement, ())
    return COLLECTOR_INTERVALS.get(collectors[-1]) if collectors else None


MEASUREMENTS = {
    m.name: m
    for m in (
        OST,
        OST_JOB,
        BRW,
        MDT,
        MDT_JOB,
        OSS_SERVICE,
        NODE,
        LNET,
        BMC,
        ARRAY_MEASUREMENT,
        ARRAY_VOLUME,
        ARRAY_DRIVE,
        ARRAY_CONTROLLER,
        ARRAY_INTERFACE,
        ARRAY_EVENT,
        ARRAY_MANAGEMENT,
        CLUSTER,
        MULTIPATH,
        BMC_POWER,
        PDU_POWER,
        OWNER_USAGE,
        OWNER_QUOTA,
        OST_CLIENT,
        MDT_CLIENT,
        KERNEL_LOG,
        KERNEL_STORM,
        SENSOR_MEASUREMENT,
    )
}
# One point per event, its text a field: kept raw only (a mean of them means nothing).
EVENTS = (ARRAY_EVENT, KERNEL_LOG, KERNEL_STORM)
# The measurements of targets, by the kind of target the sensor found.
TARGET_MEASUREMENTS = {"ost": OST, "mdt": MDT}
# The per-client measurements, by the kind of target.
CLIENT_MEASUREMENTS = {"ost": OST_CLIENT, "mdt": MDT_CLIENT}

# --- target labels ----------------------------------------------------------------------------

MGS_DEVICE = "MGS"
_TARGET_KINDS = ("OST", "MDT")


def target_label(fs: str, target: str) -> str:
    """`scratch` + `OST0003` -> `scratch-OST0003`; a point without `fs` is labelled by its
    target alone."""
    return f"{fs}-{target}" if fs else target


def point_label(point: dict) -> str:
    """The label of a point (or any mapping) with the tags `fs` and `target`."""
    return target_label(point.get(FS) or "", point.get(TARGET) or "")


def split_label(label: str) -> tuple[str, str]:
    """`scratch-OST0003` -> (`scratch`, `OST0003`); a label without a filesystem gives ``""``
    for it. Filesystem names hold no `-` after the last one (Lustre splits there too)."""
    fs, _, target = label.rpartition("-")
    return fs, target


def split_device(device: str) -> tuple[str, str] | None:
    """A Lustre device name (`scratch-OST0003`) into (fs, target); None for devices that are
    not targets (`MGS`, `OSS`)."""
    fs, target = split_label(device)
    if len(target) >= 7 and target[:3] in _TARGET_KINDS:
        return fs, target
    return None


def mgs_label(fs: str) -> str:
    """The MGT's label: Lustre calls its device `MGS`, one per filesystem here."""
    return target_label(fs, MGS_DEVICE)


def is_mgs_label(label: str) -> bool:
    return split_label(label)[1] == MGS_DEVICE
