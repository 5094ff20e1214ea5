"""Reading a hardware spec into typed values, collecting every problem it has.

The spec is what the wizard (or an operator's JSON file) says about the hardware; see
provisioning/README.md for its fields. `read_spec` checks all of it before anything is planned
and raises one `SpecError` listing every problem by field path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from provisioning import names
from provisioning.server import Server

from .catalogue import (
    CONTROLLER,
    DEFAULT_RAID,
    DEFAULT_SEGMENT_KIB,
    MDS,
    MODELS,
    OSS,
    RAID_FOR_ROLE,
    RAID_SCHEMES,
    ROLES,
    SEGMENT_SIZES_KIB,
    EnclosureModel,
    RaidScheme,
)
from .drives import DriveUseError, drives_per_enclosure, spares_per_enclosure
from .errors import SpecError

# Lustre keeps target indices in 16 bits: OST0000 to OSTffff.
MAX_TARGET_INDEX = 65535

TOP_FIELDS = {
    "filesystem", "ssu", "pair", "role", "servers", "raid", "segment_kib",
    "first_ost_index", "first_mdt_index", "arrays", "global_spares",
}  # fmt: skip
SERVER_FIELDS = {"hostname", "nids", "bmc", "pdu_outlet"}
# Optional: the interface carrying LNet, for the HA builder's healthLNET check.
# The addresses of Corosync's two knet links (management network, private heartbeat network);
# without them Corosync runs one link on the host name (the review warns).
LINK_FIELDS = ("mgmt_address", "heartbeat_address")
SERVER_OPTIONAL_FIELDS = {"lnet_interface", *LINK_FIELDS}
ARRAY_FIELDS = {
    "name",
    "controller",
    "expansions",
    "drive_tb",
    "drives",
    "global_spares",
    # The two controllers' management addresses (A, B) for the REST collector; optional.
    "management",
}


@dataclass(frozen=True)
class ArraySpec:
    name: str
    controller: EnclosureModel
    expansions: tuple[EnclosureModel, ...]
    drive_tb: float
    drives: int  # installed drives
    global_spares: int

    @property
    def models(self) -> list[EnclosureModel]:
        return [self.controller, *self.expansions]

    def enclosure_ids(self) -> list[str]:
        return [f"{self.name}-e{number}" for number in range(len(self.models))]


@dataclass(frozen=True)
class Spec:
    filesystem: str
    ssu: str
    role: str
    servers: tuple[Server, ...]
    raid: RaidScheme
    segment_kib: int
    first_ost_index: int
    first_mdt_index: int
    arrays: tuple[ArraySpec, ...]


def read_spec(raw: object) -> Spec:
    """The spec as typed values, or `SpecError` with every problem found."""
    reader = _SpecReader()
    spec = reader.read(raw)
    if reader.errors or spec is None:
        raise SpecError(reader.errors or {"spec": "could not be read"})
    return spec


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class _SpecReader:
    """Reads one spec; every check records its problem and carries on."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def error(self, path: str, message: str) -> None:
        if path in self.errors:
            self.errors[path] += f"; {message}"
        else:
            self.errors[path] = message

    # -- typed field access ---------------------------------------------------------------

    def fields(
        self, raw: object, path: str, required: set[str], known: set[str]
    ) -> dict[str, object] | None:
        if not isinstance(raw, dict):
            self.error(path or "spec", "must be a JSON object")
            return None
        for key in raw:
            if key not in known:
                # An empty or odd key is named in the message: the path alone would not show it.
                self.error(
                    _join(path, str(key)) if str(key).isidentifier() else path or "spec",
                    f"unknown field {str(key)!r}; expected one of: {', '.join(sorted(known))}",
                )
        for key in sorted(required - raw.keys()):
            self.error(_join(path, key), "is required")
        return raw

    def text(self, raw: dict[str, object], key: str, path: str) -> str | None:
        value = raw.get(key)
        if key in raw and not isinstance(value, str):
            self.error(_join(path, key), f"must be a string, not {_json_type(value)}")
            return None
        return value  # type: ignore[return-value]

    def integer(
        self,
        raw: dict[str, object],
        key: str,
        path: str,
        default: int,
        low: int | None = None,
        high: int | None = None,
    ) -> int | None:
        if key not in raw:
            return default
        value = raw[key]
        # JSON true is a Python int; a boolean here is always a mistake.
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(_join(path, key), f"must be a whole number, not {_json_type(value)}")
            return None
        if low is not None and value < low:
            bounds = f"{low} to {high}" if high is not None else f"at least {low}"
            self.error(_join(path, key), f"{value} is out of range: must be {bounds}")
            return None
        if high is not None and value > high:
            self.error(_join(path, key), f"{value} is out of range: must be {low} to {high}")
            return None
        return value

    # -- the spec ---------------------------------------------------------------------------

    def read(self, raw: object) -> Spec | None:
        top = self.fields(raw, "", {"filesystem", "servers", "arrays"}, TOP_FIELDS)
        if top is None:
            return None
        if "ssu" not in top and "pair" not in top:
            self.error("ssu", "is required (for an MDS pair, `pair` is accepted instead)")

        filesystem = self.text(top, "filesystem", "")
        if filesystem is not None and (problem := names.filesystem_problem(filesystem)):
            self.error("filesystem", problem)

        ssu = self.unit_name(top)
        role = self.text(top, "role", "") if "role" in top else OSS
        if role is not None and role not in ROLES:
            self.error("role", f"{role!r} is not a role; use one of: {', '.join(ROLES)}")
            role = None

        raid = self.raid(top, role)
        segment_kib = self.integer(top, "segment_kib", "", DEFAULT_SEGMENT_KIB)
        if segment_kib is not None and segment_kib not in SEGMENT_SIZES_KIB:
            self.error(
                "segment_kib",
                f"{segment_kib} KiB is not a supported segment size; use one of: "
                f"{', '.join(map(str, SEGMENT_SIZES_KIB))}",
            )
            segment_kib = None
        first_ost = self.integer(top, "first_ost_index", "", 0, 0, MAX_TARGET_INDEX)
        first_mdt = self.integer(top, "first_mdt_index", "", 0, 0, MAX_TARGET_INDEX)

        servers = self.servers(top["servers"]) if "servers" in top else None
        # A top-level count is the default for every array (spares serve one array only).
        spares_default = self.integer(top, "global_spares", "", None, 0)
        arrays = self.arrays(top["arrays"], raid, spares_default) if "arrays" in top else None

        if arrays is not None and raid is not None and role is not None:
            groups = sum(self.group_count(array, raid) for array in arrays)
            if role == OSS and first_ost is not None:
                self.index_range("first_ost_index", "OST", first_ost, groups)
            if role == MDS and first_mdt is not None:
                self.index_range("first_mdt_index", "MDT", first_mdt, groups)

        if self.errors:
            return None
        assert filesystem and ssu and role and raid and segment_kib
        assert servers is not None and arrays is not None
        assert first_ost is not None and first_mdt is not None
        return Spec(filesystem, ssu, role, servers, raid, segment_kib, first_ost, first_mdt, arrays)

    def unit_name(self, top: dict[str, object]) -> str | None:
        if "ssu" in top and "pair" in top:
            self.error("pair", "give either ssu or pair (its alias), not both")
            return None
        key = "ssu" if "ssu" in top else "pair"
        name = self.text(top, key, "")
        if name is not None and (problem := names.unit_name_problem(name)):
            self.error(key, problem)
            return None
        return name

    def raid(self, top: dict[str, object], role: str | None) -> RaidScheme | None:
        if role is None:
            return None
        name = self.text(top, "raid", "")
        if name is None:
            return RAID_SCHEMES[DEFAULT_RAID[role]] if "raid" not in top else None
        if name not in RAID_FOR_ROLE[role]:
            self.error(
                "raid",
                f"RAID {name!r} is not supported for role {role}; use "
                f"{' or '.join(RAID_FOR_ROLE[role])}",
            )
            return None
        return RAID_SCHEMES[name]

    def index_range(self, key: str, kind: str, first: int, count: int) -> None:
        last = first + count - 1
        if last > MAX_TARGET_INDEX:
            self.error(
                key,
                f"{count} {kind}s from index {first} would end at {last}; Lustre's highest "
                f"{kind} index is {MAX_TARGET_INDEX}",
            )

    # -- servers ----------------------------------------------------------------------------

    def servers(self, raw: object) -> tuple[Server, ...] | None:
        if not isinstance(raw, list):
            self.error("servers", f"must be a list of 2 servers, not {_json_type(raw)}")
            return None
        if len(raw) != 2:
            self.error(
                "servers",
                f"a server pair has exactly 2 servers (primary and failover); got {len(raw)}",
            )
        servers = [self.server(entry, _join("servers", index)) for index, entry in enumerate(raw)]
        self.server_clashes(raw)
        if len(raw) != 2 or None in servers:
            return None
        return tuple(server for server in servers if server is not None)

    def server(self, raw: object, path: str) -> Server | None:
        errors_before = len(self.errors)
        entry = self.fields(raw, path, SERVER_FIELDS, SERVER_FIELDS | SERVER_OPTIONAL_FIELDS)
        if entry is None:
            return None
        hostname = self.text(entry, "hostname", path)
        if hostname is not None and (problem := names.hostname_problem(hostname)):
            self.error(_join(path, "hostname"), problem)
        nids = self.nids(entry["nids"], _join(path, "nids")) if "nids" in entry else None
        bmc = self.text(entry, "bmc", path)
        if bmc is not None and (problem := names.bmc_problem(bmc)):
            self.error(_join(path, "bmc"), problem)
        outlet = self.text(entry, "pdu_outlet", path)
        if outlet is not None and (problem := names.pdu_outlet_problem(outlet)):
            self.error(_join(path, "pdu_outlet"), problem)
        interface = self.text(entry, "lnet_interface", path)
        if interface is not None and (problem := names.interface_problem(interface)):
            self.error(_join(path, "lnet_interface"), problem)
        links = {key: self.link_address(entry, key, path) for key in LINK_FIELDS}
        given = [key for key in LINK_FIELDS if key in entry]
        if len(given) == 1:
            (missing,) = set(LINK_FIELDS) - set(given)
            self.error(
                _join(path, missing),
                f"is required with {given[0]}: Corosync runs both links on every node, or one "
                "link on the host names when neither is given",
            )
        if links["mgmt_address"] and links["mgmt_address"] == links["heartbeat_address"]:
            self.error(
                _join(path, "heartbeat_address"),
                f"{links['heartbeat_address']!r} is also the mgmt_address: the two Corosync links "
                "must be on different networks, else one switch failure splits the pair",
            )
        if len(self.errors) > errors_before:
            return None
        assert hostname and nids and bmc and outlet
        return Server(hostname, nids, bmc, outlet, interface, **links)

    def link_address(self, entry: dict[str, object], key: str, path: str) -> str | None:
        address = self.text(entry, key, path)
        if address is not None and (problem := names.link_address_problem(address)):
            self.error(_join(path, key), problem)
            return None
        return address

    def nids(self, raw: object, path: str) -> tuple[str, ...] | None:
        if not isinstance(raw, list) or not raw:
            self.error(path, 'must be a non-empty list of Lustre NIDs, e.g. ["10.0.0.1@o2ib"]')
            return None
        valid = True
        for index, nid in enumerate(raw):
            if not isinstance(nid, str):
                self.error(_join(path, index), f"must be a string, not {_json_type(nid)}")
                valid = False
            elif problem := names.nid_problem(nid):
                self.error(_join(path, index), problem)
                valid = False
        return tuple(raw) if valid else None

    def server_clashes(self, raw: list[object]) -> None:
        """Values two servers of a pair must not share: names, NIDs, fence devices."""
        seen_hostnames: dict[str, str] = {}
        seen_nids: dict[str, str] = {}
        seen_bmcs: dict[str, str] = {}
        seen_outlets: dict[str, str] = {}
        seen_links: dict[str, str] = {}
        networks: list[tuple[str, set[str]]] = []
        interfaces: list[tuple[str, object]] = []
        for index, entry in enumerate(raw):
            if not isinstance(entry, dict):
                continue
            path = _join("servers", index)
            if isinstance(entry.get("lnet_interface"), str):
                interfaces.append((path, entry["lnet_interface"]))
            self.clash(entry.get("hostname"), seen_hostnames, _join(path, "hostname"), "")
            self.clash(
                entry.get("bmc"),
                seen_bmcs,
                _join(path, "bmc"),
                ": one BMC cannot fence two servers",
            )
            self.clash(
                entry.get("pdu_outlet"),
                seen_outlets,
                _join(path, "pdu_outlet"),
                ": fencing one server would cut the power of both",
            )
            for key in LINK_FIELDS:
                if key == "heartbeat_address" and entry.get(key) == entry.get("mgmt_address"):
                    continue  # the server's own check names it
                self.clash(
                    entry.get(key),
                    seen_links,
                    _join(path, key),
                    ": each Corosync link address belongs to one server",
                )
            nids = entry.get("nids")
            if not isinstance(nids, list):
                continue
            server_networks = set()
            for nid_index, nid in enumerate(nids):
                if isinstance(nid, str) and not names.nid_problem(nid):
                    network = names.nid_network(nid)
                    server_networks.add(network)
                    # o2ib and o2ib0 name the same network, hence the same NID.
                    address = f"{nid.partition('@')[0]}@{network}"
                    nid_path = _join(_join(path, "nids"), nid_index)
                    if address in seen_nids:
                        self.error(nid_path, f"{nid!r} is the same NID as {seen_nids[address]}")
                    else:
                        seen_nids[address] = nid_path
            networks.append((path, server_networks))
        linked = [
            (_join("servers", index), any(key in entry for key in LINK_FIELDS))
            for index, entry in enumerate(raw)
            if isinstance(entry, dict)
        ]
        if len(linked) == 2 and linked[0][1] != linked[1][1]:
            (with_path, _), (without_path, _) = sorted(linked, key=lambda item: not item[1])
            self.error(
                _join(without_path, "mgmt_address"),
                f"is required: {with_path} has two Corosync links, and both servers of a pair "
                "need the same links",
            )
        if len(interfaces) == 2 and interfaces[0][1] != interfaces[1][1]:
            (first_path, first_interface), (second_path, _) = interfaces
            self.error(
                _join(second_path, "lnet_interface"),
                f"differs from {first_path} ({first_interface}): the healthLNET check watches "
                "the same interface on both servers",
            )
        if len(networks) == 2 and all(found for _, found in networks):
            (first_path, first), (second_path, second) = networks
            if not first & second:
                self.error(
                    _join(second_path, "nids"),
                    f"no LNet network in common with {first_path} ({', '.join(sorted(first))}): "
                    "clients could not reach the targets after a failover",
                )

    def clash(self, value: object, seen: dict[str, str], path: str, why: str) -> None:
        if not isinstance(value, str):
            return
        if value in seen:
            self.error(path, f"{value!r} duplicates {seen[value]}{why}")
        else:
            seen[value] = path

    # -- arrays ------------------------------------------------------------------------------

    def arrays(
        self, raw: object, raid: RaidScheme | None, spares_default: int | None = None
    ) -> tuple[ArraySpec, ...] | None:
        if not isinstance(raw, list) or not raw:
            self.error("arrays", "must be a non-empty list of arrays")
            return None
        arrays = [
            self.array(entry, _join("arrays", index), raid, spares_default)
            for index, entry in enumerate(raw)
        ]
        seen: dict[str, str] = {}
        for index, entry in enumerate(raw):
            if isinstance(entry, dict):
                self.clash(entry.get("name"), seen, _join(_join("arrays", index), "name"), "")
        if None in arrays:
            return None
        return tuple(array for array in arrays if array is not None)

    def array(
        self, raw: object, path: str, raid: RaidScheme | None, spares_default: int | None = None
    ) -> ArraySpec | None:
        errors_before = len(self.errors)
        entry = self.fields(raw, path, {"name", "controller", "drive_tb"}, ARRAY_FIELDS)
        if entry is None:
            return None
        name = self.text(entry, "name", path)
        if name is not None and (problem := names.unit_name_problem(name)):
            self.error(_join(path, "name"), problem)
        controller = self.controller(entry, path)
        self.management(entry, path)
        expansions = self.expansions(entry, path, controller)
        drive_tb = self.drive_tb(entry, path)
        models = [controller, *expansions] if controller and expansions is not None else []
        # Without known models, drives and spares are still checked for type and sign.
        slots = sum(model.drives for model in models) if models else None
        if slots and controller and controller.max_drives and slots > controller.max_drives:
            self.error(
                _join(path, "expansions"),
                f"{controller.name} runs at most {controller.max_drives} drives; these "
                f"enclosures hold {slots}",
            )
        drives = self.integer(entry, "drives", path, slots or 0, 1, slots)
        default_spares = sum(model.default_global_spares for model in models)
        if spares_default is not None:
            default_spares = spares_default
        spares = self.integer(entry, "global_spares", path, default_spares, 0)
        if not models:
            return None
        if spares is not None and drives is not None and spares > drives:
            self.error(
                _join(path, "global_spares"),
                f"{spares} global spares requested but the array holds only {drives} drives",
            )
            spares = None
        if len(self.errors) > errors_before or drives is None or spares is None:
            return None
        assert name is not None and drive_tb is not None and controller is not None
        array = ArraySpec(name, controller, tuple(expansions), drive_tb, drives, spares)
        if raid is not None:
            try:
                spares_per_enclosure(drives_per_enclosure(models, drives), spares, raid)
            except DriveUseError as problem:
                blame = "drives" if "drives" in entry and "global_spares" not in entry else None
                if blame is None and "global_spares" not in entry and spares_default is not None:
                    self.error("global_spares", f"{name}: {problem}")
                else:
                    self.error(_join(path, blame or "global_spares"), str(problem))
                return None
        return array

    def management(self, entry: dict[str, object], path: str) -> None:
        """``management``: controller A's and B's management address (host or host:port).
        Only checked here: the plan does not carry it (the inventory keeps it)."""
        if "management" not in entry:
            return
        raw, where = entry["management"], _join(path, "management")
        if not isinstance(raw, list) or len(raw) != 2:
            self.error(where, "give controller A's and B's management address, as a list of two")
            return
        for index, address in enumerate(raw):
            if not isinstance(address, str):
                self.error(_join(where, index), f"must be a string, not {_json_type(address)}")
            elif problem := names.controller_address_problem(address):
                self.error(_join(where, index), problem)
        if isinstance(raw[0], str) and isinstance(raw[1], str) and raw[0].lower() == raw[1].lower():
            self.error(_join(where, 1), "controller B's address must differ from controller A's")

    def controller(self, entry: dict[str, object], path: str) -> EnclosureModel | None:
        name = self.text(entry, "controller", path)
        if name is None:
            return None
        controllers = ", ".join(sorted(m.name for m in MODELS.values() if m.is_controller))
        model = MODELS.get(name)
        if model is None:
            self.error(
                _join(path, "controller"),
                f"unknown enclosure model {name!r}; controller models: {controllers}",
            )
            return None
        if model.kind != CONTROLLER:
            self.error(
                _join(path, "controller"),
                f"{name} is an expansion enclosure without RAID controllers; the controller "
                f"enclosure must be one of: {controllers}",
            )
            return None
        return model

    def expansions(
        self, entry: dict[str, object], path: str, controller: EnclosureModel | None
    ) -> list[EnclosureModel] | None:
        raw = entry.get("expansions", [])
        path = _join(path, "expansions")
        if not isinstance(raw, list):
            self.error(path, f"must be a list of expansion models, not {_json_type(raw)}")
            return None
        expansions = []
        for index, name in enumerate(raw):
            model = MODELS.get(name) if isinstance(name, str) else None
            fits = [
                m.name
                for m in MODELS.values()
                if not m.is_controller and (controller is None or m.family == controller.family)
            ]
            if model is None:
                self.error(
                    _join(path, index),
                    f"unknown enclosure model {name!r}; expansion models: {', '.join(fits)}",
                )
            elif model.is_controller:
                self.error(
                    _join(path, index),
                    f"{name} is a controller enclosure; an expansion must be one of: "
                    f"{', '.join(fits)}",
                )
            elif controller is not None and model.family != controller.family:
                self.error(
                    _join(path, index),
                    f"{name} ({model.family}) cannot be attached to {controller.name} "
                    f"({controller.family}); it takes: {', '.join(fits) or 'no expansions'}",
                )
            else:
                expansions.append(model)
        return expansions if len(expansions) == len(raw) else None

    def drive_tb(self, entry: dict[str, object], path: str) -> float | None:
        if "drive_tb" not in entry:
            return None
        value = entry["drive_tb"]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error(_join(path, "drive_tb"), f"must be a number, not {_json_type(value)}")
            return None
        if not math.isfinite(value) or value <= 0:
            self.error(_join(path, "drive_tb"), f"{value} TB is not a drive size: must be > 0")
            return None
        return value  # as given: 4 stays 4 in the plan

    def group_count(self, array: ArraySpec, raid: RaidScheme) -> int:
        counts = drives_per_enclosure(array.models, array.drives)
        spares = spares_per_enclosure(counts, array.global_spares, raid)
        return sum(
            (count - share) // raid.drives for count, share in zip(counts, spares, strict=True)
        )


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
