"""The hardware of the virtual rack: servers, server pairs, arrays with enclosures, drawers and
drives, volume groups and volumes, and the Lustre targets formatted on them.

Everything here works on the plain-dict state of `simulator.state`. `add_plan()` racks and
cables the servers and arrays of one planned SSU or MDS pair (the plan of
`provisioning.planner.make_plan`), with blank drives: volume groups, volumes and targets are
created later through the virtual commands, exactly as on real hardware.
"""

from __future__ import annotations

import re

from provisioning import names
from simulator.state import RackError

NCPU = 32  # cores of every virtual server
# Usable share of a volume once formatted (DESIGN §2: data drives x size x 0.927).
FORMAT_EFFICIENCY = 0.927
# Bytes of OST space per inode (mkfs.lustre's ratio for large OSTs) and per MDT inode.
OST_BYTES_PER_INODE = 1 << 20
MDT_BYTES_PER_INODE = 2560

RAID_REDUNDANCY = {"0": 0, "1": 1, "3": 1, "5": 1, "6": 2}


def parse_plan_raid(raid: str) -> tuple[str, int, int]:
    """Plan notation to (SMcli raidLevel, width, data drives): "8+2" -> ("6", 10, 8),
    "4+1" -> ("5", 5, 4), "12+12"/"raid10" -> ("1", 24, 12)."""
    raid = str(raid).lower()
    match = re.fullmatch(r"(\d+)\+(\d+)", raid)
    if match:
        data, parity = int(match.group(1)), int(match.group(2))
        if data == parity:
            return "1", data * 2, data
        return {2: "6", 1: "5"}.get(parity, "6"), data + parity, data
    if raid in ("raid10", "10", "raid1", "1"):
        return "1", 0, 0
    if raid in ("raid6", "6"):
        return "6", 10, 8
    raise RackError(f"unknown RAID scheme {raid!r}")


def data_drives(raid_level: str, width: int) -> int:
    if raid_level == "6":
        return width - 2
    if raid_level in ("5", "3"):
        return width - 1
    if raid_level == "1":
        return width // 2
    return width


# ---------------------------------------------------------------------------------------------
# adding hardware


def _validate_hostname(name: str) -> None:
    if problem := names.hostname_problem(name):
        raise RackError(f"invalid hostname {name!r}: {problem}")


def add_plan(state: dict, plan: dict, now: float) -> dict:
    """Rack and cable the servers and arrays of one plan. Returns what was added.

    Adding the same plan twice adds nothing the second time; a hostname or array name that
    already belongs to another pair is an error.
    """
    pair_name = plan["ssu"]
    servers = [s["hostname"] for s in plan["servers"]]
    arrays = [a["name"] for a in plan["arrays"]]
    existing = state["pairs"].get(pair_name)
    if existing:
        if existing["servers"] == servers and existing["arrays"] == arrays:
            return {"pair": pair_name, "servers": [], "arrays": []}
        raise RackError(f"pair {pair_name} is already racked with other hardware")
    for host in servers:
        _validate_hostname(host)
        if host in state["servers"]:
            raise RackError(
                f"server {host} is already racked in pair {state['servers'][host]['pair']}"
            )
    for name in arrays:
        if name in state["arrays"]:
            raise RackError(f"array {name} is already racked")

    state["pairs"][pair_name] = {
        "name": pair_name,
        "role": plan.get("role", "oss"),
        "filesystem": plan.get("filesystem"),
        "servers": servers,
        "arrays": arrays,
        "private_switch_up": True,
        "cib": False,
    }
    for server in plan["servers"]:
        state["servers"][server["hostname"]] = {
            "hostname": server["hostname"],
            "role": plan.get("role", "oss"),
            "pair": pair_name,
            "nids": list(server.get("nids", [])),
            "bmc": server.get("bmc"),
            # The two Corosync links (a real-cluster pair cables them: simulator.realcluster).
            "mgmt_address": server.get("mgmt_address"),
            "heartbeat_address": server.get("heartbeat_address"),
            "pdu_outlet": server.get("pdu_outlet"),
            "power": "on",
            "state": "up",
            "booted": now,
            "lnet_nids": list(server.get("nids", [])),
            "lnet_link_up": True,
            "bmc_up": True,
            "pdu_up": True,
            "heartbeat_up": True,
            "pacemaker": True,
            "cluster": "online",
            "sas": {name: {"A": True, "B": True} for name in arrays},
            "mounts": {},
            "params": {},
        }
    spares = {}
    for spare in plan.get("spares", []):
        spares.setdefault(spare.get("array"), []).append(spare)
    for array in plan["arrays"]:
        state["arrays"][array["name"]] = _array_from_plan(
            array, pair_name, plan, spares.get(array["name"], [])
        )
    _assign_clients(state)
    return {"pair": pair_name, "servers": servers, "arrays": arrays}


def _array_from_plan(array: dict, pair_name: str, plan: dict, spares: list[dict]) -> dict:
    """Enclosures with their installed drives, all blank (unassigned)."""
    enclosure_ids = [e["id"] for e in array["enclosures"]]
    used: dict[str, set[tuple[int, int]]] = {e: set() for e in enclosure_ids}
    for group in plan.get("volume_groups", []):
        if group.get("array") != array["name"]:
            continue
        for drive in group["drives"]:
            used.setdefault(drive["enclosure"], set()).add((drive["drawer"], drive["slot"]))
    for spare in spares:
        used.setdefault(spare["enclosure"], set()).add((spare["drawer"], spare["slot"]))
    enclosures = []
    for tray, enclosure in enumerate(array["enclosures"]):
        drawers = int(enclosure["drawers"])
        slots = int(enclosure["slots_per_drawer"])
        installed = set(used.get(enclosure["id"], set()))
        wanted = int(enclosure.get("drives", drawers * slots))
        # Fill up to the installed count with the lowest free slots, spread over the drawers.
        slot = 1
        while len(installed) < wanted and slot <= slots:
            for drawer in range(1, drawers + 1):
                if len(installed) < wanted:
                    installed.add((drawer, slot))
            slot += 1
        enclosures.append(
            {
                "id": enclosure["id"],
                "tray": tray,
                "model": enclosure["model"],
                "drawers": drawers,
                "slots_per_drawer": slots,
                "drawers_offline": [],
                "drives": {
                    f"{d},{s}": {"state": "unassigned", "vg": None} for d, s in sorted(installed)
                },
            }
        )
    return {
        "name": array["name"],
        "model": array["controller"],
        "expansions": list(array.get("expansions", [])),
        "drive_tb": array["drive_tb"],
        "pair": pair_name,
        "controllers": {"A": "optimal", "B": "optimal"},
        "enclosures": enclosures,
        "volume_groups": {},
        "volumes": {},
    }


def client_nid(number: int) -> str:
    """The NID of the workload's client `number`: link-local addresses (169.254.100.1 on), never
    a site's own network."""
    return f"169.254.{100 + number // 250}.{1 + number % 250}@tcp"


def rename_clients(state: dict) -> None:
    """Racks made before named their clients 10.10.1xx.y@o2ib: give them (and their running
    jobs) the link-local NIDs."""
    clients = state["clients"]
    renamed = {old: client_nid(n) for n, old in enumerate(clients)}
    if all(old == new for old, new in renamed.items()):
        return
    clients[:] = list(renamed.values())
    for job in state["jobs"].values():
        job["client"] = renamed.get(job.get("client"), job.get("client"))


def _assign_clients(state: dict) -> None:
    """Compute nodes that run the workload: 16 per OSS pair, at least 8."""
    oss_pairs = sum(1 for p in state["pairs"].values() if p["role"] == "oss")
    wanted = max(8, 16 * oss_pairs)
    rename_clients(state)
    clients = state["clients"]
    while len(clients) < wanted:
        clients.append(client_nid(len(clients)))


# ---------------------------------------------------------------------------------------------
# arrays


def drive_address(array: dict, enclosure_id: str, drawer: int, slot: int) -> tuple[int, int, int]:
    for enclosure in array["enclosures"]:
        if enclosure["id"] == enclosure_id:
            return enclosure["tray"], drawer, slot
    raise RackError(f"array {array['name']} has no enclosure {enclosure_id}")


def drive_at(array: dict, tray: int, drawer: int, slot: int) -> dict | None:
    if not 0 <= tray < len(array["enclosures"]):
        return None
    return array["enclosures"][tray]["drives"].get(f"{drawer},{slot}")


def drive_missing(array: dict, tray: int, drawer: int) -> bool:
    return drawer in array["enclosures"][tray]["drawers_offline"]


_HEALTH_CACHE: dict[int, tuple[dict, int, dict]] = {}


def touch(array: dict) -> None:
    """Note a change to an array's drives, drawers, controllers or groups (health cache)."""
    array["gen"] = array.get("gen", 0) + 1


def volume_group_health(array: dict, group: dict) -> dict:
    """Cached `group_health`: recomputed when the array changed (see touch())."""
    cached = _HEALTH_CACHE.get(id(group))
    generation = array.get("gen", 0)
    if cached is not None and cached[0] is group and cached[1] == generation:
        return cached[2]
    if len(_HEALTH_CACHE) > 20_000:
        _HEALTH_CACHE.clear()
    health = group_health(array, group)
    _HEALTH_CACHE[id(group)] = (group, generation, health)
    return health


def group_health(array: dict, group: dict) -> dict:
    """State of a volume group from its drives: optimal, degraded (redundancy reduced, or
    drives missing with their drawer), critical (failed drives took all redundancy), failed
    (more drives lost than the RAID level survives). A replaced drive (a blank drive in a
    member's slot, until its reconstruction ends) holds no data: it counts as lost. A
    reconstruction or a copyback reports `operation` and its `progress` (percent); a copyback
    leaves the group optimal (every drive holds its data; the spare is still in use)."""
    failed = missing = replaced = 0
    for tray, drawer, slot in group["drives"]:
        drive = drive_at(array, tray, drawer, slot)
        if drive is None or drive["state"] == "failed":
            failed += 1
        elif drive_missing(array, tray, drawer):
            missing += 1
        elif drive["state"] == "replaced":
            replaced += 1
    redundancy = RAID_REDUNDANCY.get(group["raid"], 0)
    lost = failed + missing + replaced
    if lost > redundancy:
        state = "failed"
    elif lost and redundancy and failed + replaced >= redundancy:
        state = "critical"
    elif lost or group.get("rebuild"):
        state = "degraded"
    else:
        state = "optimal"
    operation, progress = None, None
    if group.get("rebuild"):
        operation, progress = "reconstruction", group["rebuild"]["progress"]
    elif group.get("copyback"):
        operation, progress = "copyback", group["copyback"]["progress"]
    return {
        "state": state,
        "failed_drives": failed,
        "missing_drives": missing,
        "replaced_drives": replaced,
        "redundancy_left": max(0, redundancy - lost),
        "operation": operation,
        "progress": progress,
    }


def find_volume(state: dict, name: str) -> tuple[dict, dict] | None:
    for array in state["arrays"].values():
        volume = array["volumes"].get(name)
        if volume:
            return array, volume
    return None


def controller_serving(array: dict, volume: dict) -> str | None:
    """The controller that owns a volume now: its preferred one, or the partner if that one
    failed (E-series moves ownership on controller failure)."""
    preferred = volume["owner"]
    if array["controllers"][preferred] == "optimal":
        return preferred
    other = "B" if preferred == "A" else "A"
    return other if array["controllers"][other] == "optimal" else None


def _host_array_sees(server: dict, array: dict) -> bool:
    links = server["sas"].get(array["name"])
    if not links or server["state"] != "up":
        return False
    return any(up and array["controllers"][c] == "optimal" for c, up in links.items())


def host_sees_volume(state: dict, host: str, volume_name: str) -> bool:
    """The multipath device /dev/mapper/<volume> exists on a server when it is up and has at
    least one SAS path to a working controller of the array holding the volume."""
    server = state["servers"].get(host)
    if not server:
        return False
    for array_name in server["sas"]:
        array = state["arrays"].get(array_name)
        if array and volume_name in array["volumes"]:
            return _host_array_sees(server, array) and _mapped_to(array, volume_name, host)
    return False


def _mapped_to(array: dict, volume_name: str, host: str) -> bool:
    """SANtricity's partitions: no mapping on the array means the Default Group sees all."""
    mappings = array.get("mappings")
    if not mappings:
        return True
    mapping = mappings.get(volume_name)
    return bool(mapping) and host in array.get("host_groups", {}).get(mapping["host_group"], [])


def mapped_volumes(state: dict, host: str) -> list[tuple[dict, str]]:
    """(array, volume name) of every volume mapped to the server on the arrays cabled to it,
    whatever the state of its SAS links: the multipath maps it keeps."""
    server = state["servers"][host]
    found = []
    for array_name in sorted(server["sas"]):
        array = state["arrays"].get(array_name)
        if array:
            found += [(array, name) for name in array["volumes"] if _mapped_to(array, name, host)]
    return found


def host_volumes(state: dict, host: str) -> list[str]:
    server = state["servers"][host]
    return sorted(
        name for array, name in mapped_volumes(state, host) if _host_array_sees(server, array)
    )


def target_volume(state: dict, target: dict) -> tuple[dict, dict] | None:
    """The array and volume under a target (targets remember their array)."""
    array = state["arrays"].get(target.get("array", ""))
    if array and target["volume"] in array["volumes"]:
        return array, array["volumes"][target["volume"]]
    return find_volume(state, target["volume"])


# ---------------------------------------------------------------------------------------------
# targets


def target_kind(label: str) -> str:
    parsed = names.parse_target_label(label)
    if parsed is None:
        raise RackError(f"invalid target label {label!r}")
    return parsed[1]


def target_health(state: dict, target: dict) -> str:
    """optimal / degraded / critical / failed: the state of the volume group under it."""
    found = target_volume(state, target)
    if not found:
        return "failed"
    array, volume = found
    if controller_serving(array, volume) is None:
        return "failed"
    group = array["volume_groups"].get(volume["vg"])
    if group is None:
        return "failed"
    return volume_group_health(array, group)["state"]


def mgs_nids(state: dict) -> list[str]:
    """NIDs of the servers that can run the MGS (where the MGT is formatted to be served)."""
    mgt = state["targets"].get("MGS")
    return list(mgt["servicenodes"]) if mgt else []


def server_of_nid(state: dict, nid: str) -> str | None:
    for host, server in state["servers"].items():
        if nid in server["lnet_nids"] or nid in server["nids"]:
            return host
    return None


def lnet_reachable(state: dict, host: str) -> bool:
    server = state["servers"][host]
    return server["state"] == "up" and server["lnet_link_up"] and bool(server["lnet_nids"])


def mgs_available(state: dict) -> bool:
    mgt = state["targets"].get("MGS")
    if not mgt or not mgt.get("mounted_on"):
        return False
    return lnet_reachable(state, mgt["mounted_on"])


# ---------------------------------------------------------------------------------------------
# the pair's cluster links (DESIGN §2: Corosync knet, link 0 on the management network, link 1
# on the private heartbeat network)


def has_two_links(state: dict, pair_name: str) -> bool:
    """Every server of the pair has a management and a heartbeat address: its Corosync runs
    two knet links, so losing the private network alone is not a split. A pair without them
    has one link, on the private network (the imitation's older racks)."""
    return all(
        state["servers"][host].get("mgmt_address")
        and state["servers"][host].get("heartbeat_address")
        for host in state["pairs"][pair_name]["servers"]
    )


def heartbeat_link_up(state: dict, host: str, peer: str) -> bool:
    """The link on the private heartbeat network between two servers: both ports and the
    pair's private switch up."""
    pair = state["pairs"][state["servers"][host]["pair"]]
    return pair["private_switch_up"] and all(
        state["servers"][name]["heartbeat_up"] for name in (host, peer)
    )


def fence_network_up(state: dict, server: dict) -> bool:
    """Whether the partner can reach the server's BMC and PDU over the network. With two links
    the BMCs and PDUs sit on the management network (DESIGN's rack), which no failure of the
    private switch touches; on a one-link pair they share the private switch."""
    return (
        has_two_links(state, server["pair"]) or state["pairs"][server["pair"]]["private_switch_up"]
    )
