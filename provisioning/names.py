"""The one set of name rules: host names (dotted FQDNs too), filesystem, unit and target
names, NIDs, BMC addresses and PDU outlets, for everything the plan hands on to shells, ansible
and Pacemaker.

Used by the planner, the HA builder (provisioning/ha), the simulator's topology, the inventory's
model validators and the wizard's forms. Plain Python (standard library only).

Each check returns None when the value is acceptable, or a sentence saying why it is not, so the
spec validator can collect every problem of a spec in one pass.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata

# Lustre's own limit is 8 characters; the alphabet is narrowed to what is safe everywhere the
# name travels (device paths, ansible variables), and it starts with a letter because target
# labels such as scratch-OST0000 become Pacemaker resource ids, which are XML ids.
FILESYSTEM_NAME = re.compile(r"^[a-z][a-z0-9_]{0,7}$")
# SSU, pair and array names become parts of Pacemaker ids, ansible group names and shell words.
UNIT_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
HOSTNAME_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
# LNet network types whose NIDs carry an IPv4 address (socklnd, o2iblnd, kfilnd, gnilnd, ptl4).
LNET_TYPES = ("tcp", "o2ib", "kfi", "gni", "ptl4")
LNET_NETWORK = re.compile(rf"^(?P<lnd>{'|'.join(LNET_TYPES)})(?P<number>0|[1-9][0-9]{{0,4}})?$")
# LNet keeps the network number in 16 bits.
MAX_LNET_NUMBER = 65535
# A Linux network interface name (at most 15 characters), as the healthLNET agent is given it.
INTERFACE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$")
# The MGT's label (Lustre's own); OSTs and MDTs are <fsname>-<OST|MDT><index in 4 hex digits>.
MGS_LABEL = "MGS"
TARGET_LABEL = re.compile(r"^(?P<fs>[a-z][a-z0-9_]{0,7})-(?P<kind>OST|MDT)(?P<index>[0-9a-f]{4})$")
# A BMC or PDU user as ipmitool and the fence agents are given it (in argv and the CIB); never
# starting with '-', which ipmitool would read as an option (`-U -x`).
FENCE_USER = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}$")
PDU_OUTLET = re.compile(r"^(?P<pdu>[^:]+):(?P<outlet>[0-9]+)$")
MAX_PDU_OUTLET = 999


def filesystem_problem(name: str) -> str | None:
    if FILESYSTEM_NAME.fullmatch(name):
        return None
    return (
        f"{name!r} is not a filesystem name Lustre accepts here: "
        "use 1 to 8 characters of a-z, 0-9 and _, starting with a letter"
    )


def unit_name_problem(name: str) -> str | None:
    if UNIT_NAME.fullmatch(name):
        return None
    return (
        f"{name!r} is not a safe name: start with a lowercase letter, then up to 31 lowercase "
        "letters, digits or hyphens"
    )


def hostname_problem(name: str) -> str | None:
    """RFC 1123 host names, lowercase only (Pacemaker node names must match `uname -n`)."""
    if not name:
        return "host name is empty"
    if len(name) > 253:
        return f"host name is {len(name)} characters long; at most 253 are allowed"
    for label in name.split("."):
        if len(label) > 63:
            return f"label {label[:20]!r}... is {len(label)} characters long; at most 63"
        if not HOSTNAME_LABEL.fullmatch(label):
            return (
                f"{name!r} is not a valid host name: each dot-separated label must be 1 to 63 "
                "lowercase letters, digits or hyphens, not starting or ending with a hyphen"
            )
    return None


def ipv4_problem(address: str) -> str | None:
    octets = address.split(".")
    if len(octets) != 4 or not all(octet.isdigit() and octet.isascii() for octet in octets):
        return f"{address!r} is not an IPv4 address"
    for octet in octets:
        # Leading zeros are read as octal by some tools: refuse the ambiguity.
        if len(octet) > 1 and octet.startswith("0"):
            return f"{address!r} is not an IPv4 address: octet {octet} has a leading zero"
        if int(octet) > 255:
            return f"{address!r} is not an IPv4 address: octet {octet} is above 255"
    return None


def is_ipv4_shaped(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9.]+", value))


def link_address_problem(address: str) -> str | None:
    """An address of a Corosync link (knet): an IPv4 or IPv6 literal, nothing else.

    A host name would make Corosync depend on name resolution to form the cluster, and
    knet binds each link to the address given, so a name is refused here.
    """
    if is_ipv4_shaped(address):
        return ipv4_problem(address)
    if ":" in address:
        try:
            parsed = ipaddress.IPv6Address(address)
        except ValueError:
            return f"{address!r} is not an IPv6 address"
        if parsed.scope_id is not None:
            # A zone ("%eth0") is free text that would land in corosync.conf as it is.
            return f"{address!r}: give the address without a zone (%...)"
        if parsed.is_multicast or parsed.is_unspecified:
            return f"{address!r} cannot be a server's address (multicast or unspecified)"
        return None
    return f"{address!r} is not an IPv4 or IPv6 address"


def nid_problem(nid: str) -> str | None:
    """A Lustre NID of the form <IPv4>@<lnd><optional network number>, e.g. 10.0.0.1@o2ib1."""
    address, at, network = nid.partition("@")
    if not at:
        return f"{nid!r} is not a Lustre NID: expected <IPv4>@<network>, e.g. 10.0.0.1@o2ib"
    problem = ipv4_problem(address)
    if problem:
        return f"{nid!r} is not a Lustre NID: {problem}"
    match = LNET_NETWORK.fullmatch(network)
    if not match or int(match.group("number") or 0) > MAX_LNET_NUMBER:
        return (
            f"{nid!r} is not a Lustre NID: the network must be one of "
            f"{', '.join(LNET_TYPES)} with an optional number up to {MAX_LNET_NUMBER}, "
            "e.g. o2ib or tcp1"
        )
    return None


def nid_lnd(nid: str) -> str:
    """The LNet network type of a valid NID: o2ib for 10.0.0.1@o2ib1."""
    match = LNET_NETWORK.fullmatch(nid.partition("@")[2])
    assert match, nid
    return match.group("lnd")


def nid_network(nid: str) -> str:
    """The LNet network of a valid NID; `o2ib` and `o2ib0` are the same network."""
    match = LNET_NETWORK.fullmatch(nid.partition("@")[2])
    assert match, nid
    lnd, number = match.group("lnd"), match.group("number")
    return f"{lnd}{number or '0'}"


def bmc_problem(address: str) -> str | None:
    if is_ipv4_shaped(address):
        return ipv4_problem(address)
    if hostname_problem(address):
        return f"{address!r} is neither an IPv4 address nor a valid host name"
    return None


# SANtricity's embedded web server listens on 8443 when a controller's address names no port.
SANTRICITY_PORT = 8443


def split_controller_address(value: str) -> tuple[str, int]:
    """``host``, ``host:port``, ``IPv6`` or ``[IPv6]:port`` -> (host, port); no check."""
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, int(rest[1:]) if rest[1:].isdigit() else SANTRICITY_PORT
    if value.count(":") == 1:
        host, _, port = value.partition(":")
        return host, int(port) if port.isdigit() else SANTRICITY_PORT
    return value, SANTRICITY_PORT


def controller_address_problem(value: str) -> str | None:
    """An array controller's management address: an IPv4 address, an IPv6 address or a host
    name, with an optional port (``host:8443``, ``[fd00::21]:8443``). It reaches the array
    collector's configuration file and, through it, a connection: nothing else is accepted."""
    host, port = value, ""
    if value.startswith("["):
        host, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return (
                f"{value!r} is not an address: write an IPv6 address with a port as [address]:port"
            )
        port = rest[1:] if rest else ""
        if rest and not port:
            return f"{value!r}: the port after ':' is missing"
        if ":" not in host:
            return f"{value!r}: only an IPv6 address goes in brackets"
    elif value.count(":") == 1:
        host, _, port = value.partition(":")
        if not port:
            return f"{value!r}: the port after ':' is missing"
    if port and (not port.isdigit() or port.startswith("0") or not 1 <= int(port) <= 65535):
        return f"{value!r}: the port must be a number from 1 to 65535"
    if ":" in host:
        problem = link_address_problem(host)
        return problem and problem.replace("a server's", "a controller's")
    if is_ipv4_shaped(host):
        return ipv4_problem(host)
    if not host or hostname_problem(host):
        return (
            f"{value!r} is not an IPv4 address, an IPv6 address or a host name "
            "(with an optional :port)"
        )
    return None


def pdu_outlet_problem(value: str) -> str | None:
    match = PDU_OUTLET.fullmatch(value)
    if not match:
        return f"{value!r} is not a PDU outlet: expected <pdu-name>:<outlet number>, e.g. pdu1:3"
    pdu, outlet = match.group("pdu"), match.group("outlet")
    if bmc_problem(pdu):
        return f"{value!r}: PDU {pdu!r} is neither an IPv4 address nor a valid host name"
    if outlet.startswith("0") or not 1 <= int(outlet) <= MAX_PDU_OUTLET:
        return f"{value!r}: outlet number must be 1 to {MAX_PDU_OUTLET}, without leading zeros"
    return None


def interface_problem(name: str) -> str | None:
    if INTERFACE_NAME.fullmatch(name):
        return None
    return (
        f"{name!r} is not a network interface name: a letter, then up to 14 letters, digits, "
        "'_', '.' or '-'"
    )


def fence_user_problem(name: str) -> str | None:
    if FENCE_USER.fullmatch(name):
        return None
    if name.startswith("-"):
        return f"{name!r} begins with '-', which ipmitool and the fence agents read as an option"
    return (
        f"{name!r} is not a BMC user name the fence agents accept: 1 to 32 letters, digits, "
        "'_', '.' or '-', not starting with '-'"
    )


def monitor_user_problem(name: str) -> str | None:
    """The array's monitor account, as written into the array collector's configuration."""
    if FENCE_USER.fullmatch(name):
        return None
    return (
        f"{name!r} is not an array account name: 1 to 32 letters, digits, '_', '.' or '-', "
        "not starting with '-'"
    )


# Line ends (CR, LF, and the vertical tab, form feed and separators Python's mail package also
# breaks lines at), other C0/C1 controls, invisible format characters (bidirectional overrides)
# and lone surrogates: none belongs in a name, and in a header or a log line they break or forge
# lines.
CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def first_control_character(text: str) -> tuple[int, str] | None:
    """The position (from 1) and the character of ``text``'s first control character."""
    for position, character in enumerate(text, 1):
        if unicodedata.category(character) in CONTROL_CATEGORIES:
            return position, character
    return None


def fence_password_problem(password: str) -> str | None:
    """A BMC password: any printable text. It travels only as a file's content (never a
    template, never a command's argument), so quotes, '$', '\\', '{{' and spaces are all fine;
    a line break or other control character would end or corrupt the one line the fence
    agents read, and they drop spaces at its end (fence agents strip the password they read)."""
    bad = next((c for c in password if not c.isprintable()), None)
    if bad is not None:
        return (
            f"the password holds the control or invisible character {bad!r}: the fence agents "
            "read one line of printable text"
        )
    if password != password.strip():
        return "the password begins or ends with a space, which the fence agents would drop"
    return None


def monitor_password_problem(password: str) -> str | None:
    """An array monitor account's password: one line of printable text in a 0600 file, which
    the array collector reads stripped of surrounding spaces."""
    bad = next((c for c in password if not c.isprintable()), None)
    if bad is not None:
        return (
            f"the password holds the control or invisible character {bad!r}: the array "
            "collector reads one line of printable text"
        )
    if password != password.strip():
        return "the password begins or ends with a space, which the array collector would drop"
    return None


def target_label(filesystem: str, kind: str, index: int) -> str:
    """The label Lustre gives a target: MGS, or scratch-OST000a."""
    return MGS_LABEL if kind == "MGT" else f"{filesystem}-{kind}{index:04x}"


def parse_target_label(label: str) -> tuple[str, str, int] | None:
    """(filesystem, kind, index) of an OST or MDT label; ("", "MGT", 0) for the MGS."""
    if label == MGS_LABEL:
        return "", "MGT", 0
    match = TARGET_LABEL.fullmatch(label)
    if not match:
        return None
    return match.group("fs"), match.group("kind"), int(match.group("index"), 16)


def target_label_problem(label: str, kind: str, filesystem: str) -> str | None:
    parsed = parse_target_label(label)
    if parsed is None or parsed[1] != kind or (kind != "MGT" and parsed[0] != filesystem):
        if kind == "MGT":
            return f"an MGT is labelled {MGS_LABEL!r}, not {label!r}"
        return f"{label!r} is not a {kind} label of filesystem {filesystem!r}"
    return None
