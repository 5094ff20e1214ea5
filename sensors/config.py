"""The sensor's configuration: one INI file (see sensors/deploy/sensor.conf.example), read with
configparser and checked at start-up, so a bad value stops the sensor with a clear message
instead of a silent wrong series."""

from __future__ import annotations

import configparser
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

COLLECTORS = (
    "ost",
    "mdt",
    "oss_service",
    "node",
    "lnet",
    "bmc",
    "array",
    "cluster",
    "multipath",
    "partner_bmc",
    "partner_pdu",
    "santricity",
    "usage",
    "exports",
    "kmsg",
)
# The collectors that read the server's own files, every round (`[sensor] interval`); every
# other one runs on an interval of its own: those of FILE_INTERVALS within the round, the others
# (an outside program or device to wait on) in threads.
EVERY_ROUND = ("ost", "mdt", "oss_service", "node", "kmsg")
# Files too, but many (a line per owner and target, a file per client and target): read within
# the round when their interval comes round (no program to wait on, so no thread).
FILE_INTERVALS = ("usage", "exports")
# Seconds between runs of each outside collector, by default: what the hardware answers
# comfortably (a BMC's full sensor list takes one to several seconds, an array's state is
# watched once a minute as E-series sites do). `lnet` is the lnetctl state; the LNet counters
# are files, read every round.
DEFAULT_INTERVALS = {
    "bmc": 60.0,
    "array": 60.0,
    "santricity": 60.0,
    "partner_bmc": 60.0,
    "partner_pdu": 60.0,
    "multipath": 30.0,
    "cluster": 10.0,
    "lnet": 10.0,
    "usage": 60.0,
    "exports": 30.0,
}
# The config section of each outside collector (its `interval =` and `timeout =` keys).
SECTIONS = {"partner_bmc": "partner", "partner_pdu": "partner"}
DEFAULT_SPOOL_DIR = "/var/lib/ostara-sensor/spool"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_TAG_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
# Tags the collectors set themselves; a static tag must not shadow them.
RESERVED_TAGS = {
    "target",
    "jobid",
    "section",
    "bucket",
    "service",
    "role",
    "sensor",
    "type",
    "array",
    "component",
    "id",
    "server",
    "device",
    "polled_by",
    "volume",
    "volume_group",
    "controller",
    "interface",
    "priority",
    "event_type",
    "kind",
    "client",
    "pool",
    "subsystem",
    "severity",
    "message_number",
}
# SANtricity's embedded web server listens on 8443 when an address names no port.
SANTRICITY_PORT = 8443
_HEX64_RE = re.compile(r"^[0-9a-f]{64}$")


class ConfigError(ValueError):
    """The configuration file has a missing or invalid value."""


@dataclass(frozen=True)
class SantricityArray:
    """One array watched through its controllers' REST API (`[santricity.<name>]`)."""

    name: str
    # (host, port) of controller A, then B: A is asked first, B when A does not answer.
    controllers: tuple[tuple[str, int], ...]
    # Each controller's own certificate, pinned at provisioning, in the order of `controllers`:
    # SHA-256 of the DER form, 64 lowercase hex digits; "" for a controller not pinned yet (it
    # is never asked). Or else a CA file the site gives, verified as any HTTPS server is.
    fingerprints: tuple[str, ...] = ()
    ca_file: str = ""
    # The array's read-only monitor account.
    user: str = ""
    password: str = field(default="", repr=False)


@dataclass
class SensorConfig:
    server: str = field(default_factory=lambda: socket.gethostname().split(".")[0])
    root: str = "/"
    interval: float = 10.0
    role: str = ""
    collectors: tuple[str, ...] = COLLECTORS
    tags: dict[str, str] = field(default_factory=dict)
    influxdb_url: str = "http://127.0.0.1:8086"
    database: str = "ostara"
    retention_policy: str = ""
    username: str = ""
    password: str = ""
    timeout: float = 10.0
    batch_size: int = 5000
    spool_dir: str = DEFAULT_SPOOL_DIR
    spool_max_bytes: int = 100 * 1024 * 1024
    spool_max_batches: int = 10000
    bmc_command: str = ""
    bmc_timeout: float = 20.0
    array_command: str = ""
    array_smcli: str = ""
    array_names: tuple[str, ...] = ()
    array_timeout: float = 20.0
    # The redundant paths (sensors.redundancy); empty commands are not run.
    cluster_command: str = ""
    multipath_command: str = ""
    lnetctl_command: str = ""
    lnet_peers: tuple[str, ...] = ()
    partner_host: str = ""
    partner_bmc_command: str = ""
    # The fence agent's `status` of the partner's PDU outlet (the second fencing level).
    partner_pdu_command: str = ""
    command_timeout: float = 10.0
    # Lustre kernel lines sent one by one per round; the rest of a storm is counted.
    kmsg_max_lines: int = 100
    # Seconds between runs and the timeout of each outside collector, where the config sets
    # them (`[bmc] interval = 60`); the others take DEFAULT_INTERVALS and the timeouts above.
    intervals: dict[str, float] = field(default_factory=dict)
    timeouts: dict[str, float] = field(default_factory=dict)
    # The arrays' REST API, asked from the management server (sensors.santricity).
    santricity_arrays: tuple[SantricityArray, ...] = ()
    # The longest one array's conversation may take, its second controller included.
    santricity_timeout: float = 20.0

    def static_tags(self) -> dict[str, str]:
        return {**self.tags, "server": self.server}

    def interval_of(self, collector: str) -> float:
        """Seconds between runs of a collector: its own interval, or every round (never more
        often: the rounds are the sensor's ticks)."""
        own = self.intervals.get(collector, DEFAULT_INTERVALS.get(collector, self.interval))
        return max(own, self.interval)

    def timeout_of(self, collector: str) -> float:
        """Seconds one run of an outside collector may take; never more than its interval,
        so a hung command is given up before its next run is due."""
        default = {
            "bmc": self.bmc_timeout,
            "array": self.array_timeout,
            "santricity": self.santricity_timeout,
        }
        timeout = self.timeouts.get(collector, default.get(collector, self.command_timeout))
        return min(timeout, max(1.0, self.interval_of(collector)))


def _number(parser: configparser.ConfigParser, section: str, key: str, default, kind):
    raw = parser.get(section, key, fallback="").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"[{section}] {key} = {raw!r} is not a number") from None
    if value <= 0:
        raise ConfigError(f"[{section}] {key} must be positive, got {raw!r}")
    return value


def load_config(path: str | Path) -> SensorConfig:
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";",))
    try:
        with open(path, encoding="utf-8") as handle:
            parser.read_file(handle)
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    except configparser.Error as error:
        raise ConfigError(f"{path}: {error}") from None
    config = SensorConfig()

    def text(section: str, key: str, default: str) -> str:
        return parser.get(section, key, fallback=default).strip() or default

    config.server = text("sensor", "server", config.server)
    config.root = text("sensor", "root", config.root)
    config.interval = _number(parser, "sensor", "interval", config.interval, float)
    config.role = text("sensor", "role", "")
    collectors = text("sensor", "collect", ",".join(COLLECTORS))
    config.collectors = tuple(c.strip() for c in collectors.split(",") if c.strip())
    if parser.has_section("tags"):
        config.tags = {key: value.strip() for key, value in parser.items("tags")}

    config.influxdb_url = text("influxdb", "url", config.influxdb_url).rstrip("/")
    config.database = text("influxdb", "database", config.database)
    config.retention_policy = text("influxdb", "retention_policy", "")
    config.username = text("influxdb", "username", "")
    config.password = parser.get("influxdb", "password", fallback="").strip()
    password_file = text("influxdb", "password_file", "")
    if password_file:
        try:
            config.password = Path(password_file).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ConfigError(f"[influxdb] password_file: {error}") from None
    config.timeout = _number(parser, "influxdb", "timeout", config.timeout, float)
    config.batch_size = _number(parser, "influxdb", "batch_size", config.batch_size, int)

    config.spool_dir = text("spool", "dir", config.spool_dir)
    config.spool_max_bytes = _number(parser, "spool", "max_bytes", config.spool_max_bytes, int)
    config.spool_max_batches = _number(
        parser, "spool", "max_batches", config.spool_max_batches, int
    )
    config.bmc_command = text("bmc", "command", "")
    config.bmc_timeout = _number(parser, "bmc", "timeout", config.bmc_timeout, float)
    config.array_command = text("array", "command", "")
    config.array_smcli = text("array", "smcli", "")
    names = text("array", "names", "")
    config.array_names = tuple(n for n in re.split(r"[\s,]+", names) if n)
    config.array_timeout = _number(parser, "array", "timeout", config.array_timeout, float)
    config.cluster_command = text("cluster", "command", "")
    config.multipath_command = text("multipath", "command", "")
    config.lnetctl_command = text("lnet", "lnetctl", "")
    peers = text("lnet", "ping", "")
    config.lnet_peers = tuple(n for n in re.split(r"[\s,]+", peers) if n)
    config.partner_host = text("partner", "host", "")
    config.partner_bmc_command = text("partner", "bmc_command", "")
    config.partner_pdu_command = text("partner", "pdu_command", "")
    config.command_timeout = _number(
        parser, "sensor", "command_timeout", config.command_timeout, float
    )
    config.kmsg_max_lines = _number(parser, "kmsg", "max_lines", config.kmsg_max_lines, int)
    for name in COLLECTORS:
        if name in EVERY_ROUND:
            continue
        section = SECTIONS.get(name, name)
        interval = _number(parser, section, "interval", None, float)
        if interval is not None:
            config.intervals[name] = interval
        if name in ("bmc", "array"):
            continue  # read above, with their own defaults
        timeout = _number(parser, section, "timeout", None, float)
        if timeout is not None:
            config.timeouts[name] = timeout
    _read_santricity(parser, config)
    validate(config)
    return config


def _read_santricity(parser: configparser.ConfigParser, config: SensorConfig) -> None:
    """`[santricity]` and one `[santricity.<array>]` per array it names."""
    section = "santricity"
    if not parser.has_section(section):
        return
    names = [n for n in re.split(r"[\s,]+", parser.get(section, "arrays", fallback="")) if n]
    if not names:
        return
    arrays = []
    for name in names:
        if not _NAME_RE.match(name):
            raise ConfigError(f"[santricity] arrays: {name!r} is not a valid array name")
        arrays.append(_santricity_array(parser, name))
    config.santricity_arrays = tuple(arrays)


def _monitor_account(parser: configparser.ConfigParser, section: str) -> tuple[str, str]:
    """The array's monitor account: its section's `user` and `password_file`, each by default
    the `[santricity]` one (arrays that share an account)."""
    user_from = section if parser.get(section, "user", fallback="").strip() else "santricity"
    user = parser.get(user_from, "user", fallback="").strip()
    if not user:
        raise ConfigError(f"[{section}] user: the array's monitor account is missing")
    file_from = (
        section if parser.get(section, "password_file", fallback="").strip() else "santricity"
    )
    path = parser.get(file_from, "password_file", fallback="").strip()
    if not path:
        raise ConfigError(
            f"[{section}] password_file: the monitor account's password file is missing"
        )
    try:
        password = Path(path).read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ConfigError(f"[{file_from}] password_file: {error}") from None
    return user, password


def _santricity_array(parser: configparser.ConfigParser, name: str) -> SantricityArray:
    section = f"santricity.{name}"
    if not parser.has_section(section):
        raise ConfigError(f"[santricity] arrays names {name}, but there is no [{section}]")
    addresses = parser.get(section, "controllers", fallback="").split()
    if not 1 <= len(addresses) <= 2:
        raise ConfigError(
            f"[{section}] controllers: give controller A's and B's address (host:port), "
            f"got {len(addresses)}"
        )
    controllers = tuple(_address(section, a) for a in addresses)
    if parser.has_option(section, "fingerprint"):
        raise ConfigError(
            f"[{section}] fingerprint: each controller has its own certificate; give "
            "fingerprints = <A's> <B's>, in the order of controllers"
        )
    raw = parser.get(section, "fingerprints", fallback="").strip()
    ca_file = parser.get(section, "ca_file", fallback="").strip()
    if bool(raw) == bool(ca_file):
        raise ConfigError(
            f"[{section}] give either fingerprints (the controllers' pinned certificates) "
            "or ca_file"
        )
    # One per controller, in their order; `-` for a controller not pinned yet.
    fingerprints = []
    for word in raw.split():
        fingerprint = word.lower().removeprefix("sha256:").replace(":", "")
        if word != "-" and not _HEX64_RE.match(fingerprint):
            raise ConfigError(
                f"[{section}] fingerprints: {word!r} is not a SHA-256 fingerprint "
                "(64 hex digits) or - (not pinned yet)"
            )
        fingerprints.append("" if word == "-" else fingerprint)
    if raw and len(fingerprints) != len(controllers):
        raise ConfigError(
            f"[{section}] fingerprints: give one per controller, in the order of controllers "
            f"({len(controllers)}), got {len(fingerprints)}"
        )
    if raw and not any(fingerprints):
        raise ConfigError(f"[{section}] fingerprints: no controller's certificate is pinned")
    if ca_file and not Path(ca_file).is_file():
        raise ConfigError(f"[{section}] ca_file = {ca_file!r}: no such file")
    user, password = _monitor_account(parser, section)
    return SantricityArray(name, controllers, tuple(fingerprints), ca_file, user, password)


def _address(section: str, text: str) -> tuple[str, int]:
    """`host:port`, `host` (port 8443) or `[v6 address]:port`."""
    host, port = text, str(SANTRICITY_PORT)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port = text.split(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"[{section}] controllers: {text!r} is not host:port")
    return host, int(port)


def validate(config: SensorConfig) -> None:
    if not _NAME_RE.match(config.server):
        raise ConfigError(f"[sensor] server = {config.server!r} is not a valid host name")
    unknown = set(config.collectors) - set(COLLECTORS)
    if unknown:
        raise ConfigError(
            f"[sensor] collect: unknown {', '.join(sorted(unknown))}; "
            f"choose from {', '.join(COLLECTORS)}"
        )
    for key, value in config.tags.items():
        if not _TAG_KEY_RE.match(key) or key in RESERVED_TAGS:
            raise ConfigError(f"[tags] {key!r} is not allowed as a static tag name")
        if not _NAME_RE.match(value):
            raise ConfigError(f"[tags] {key} = {value!r} is not a valid value")
    if not config.influxdb_url.startswith(("http://", "https://")):
        raise ConfigError(f"[influxdb] url = {config.influxdb_url!r} must be http(s)://...")
    if not _NAME_RE.match(config.database):
        raise ConfigError(f"[influxdb] database = {config.database!r} is not a valid name")
    if config.array_smcli and not config.array_names:
        raise ConfigError("[array] smcli needs the arrays' names in [array] names")
    for name in config.array_names:
        if not _NAME_RE.match(name):
            raise ConfigError(f"[array] names: {name!r} is not a valid array name")
    polls = config.partner_bmc_command or config.partner_pdu_command
    if bool(config.partner_host) != bool(polls):
        raise ConfigError("[partner] host goes with a bmc_command or a pdu_command")
    if config.partner_host and not _NAME_RE.match(config.partner_host):
        raise ConfigError(f"[partner] host = {config.partner_host!r} is not a valid host name")
    if config.lnet_peers and not config.lnetctl_command:
        raise ConfigError("[lnet] ping needs [lnet] lnetctl")
    if config.role and not _NAME_RE.match(config.role):
        raise ConfigError(f"[sensor] role = {config.role!r} is not a valid value")
