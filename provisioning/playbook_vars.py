"""What the playbooks need from a plan, worked out in Python where it can be tested.

The playbooks stay declarative: they loop over these lists. Nothing here touches a server.
"""

from __future__ import annotations

from pathlib import Path

# Installed on every server for the fence devices' password_script (see provisioning/ha).
FENCE_SECRET_SCRIPT = Path(__file__).resolve().parent / "ha" / "fence-secret"
# The sensor package copied to every server (standard library only).
SENSOR_SOURCE = Path(__file__).resolve().parent.parent / "sensors"

# SANtricity's raidLevel for our schemes: RAID-6 for 8+2; RAID-10 is "raidLevel=1" with more
# than two drives (the array stripes over the mirrored pairs).
RAID_LEVEL = {"8+2": "6", "10": "1", "12+12": "1"}
# The MGT needs little room: its volume is fixed, the MDT takes the rest of the group.
MGT_CAPACITY_GB = 16


def array_layout(plan: dict) -> dict:
    """Volume groups, volumes and hot spares of a plan, as SMcli arguments."""
    trays = {
        enclosure["id"]: position
        for array in plan["arrays"]
        for position, enclosure in enumerate(array["enclosures"])
    }
    targets_by_group: dict[str, list[dict]] = {}
    for target in plan["targets"]:
        targets_by_group.setdefault(target["volume_group"], []).append(target)
    groups = []
    lun = 0  # LUNs number the pair's volumes in plan order, the same on every array
    for group in plan["volume_groups"]:
        raid = group.get("raid", plan["raid"])
        volumes = []
        # The MGT first, so that the MDT created after it takes what is left.
        for target in sorted(
            targets_by_group.get(group["name"], []), key=lambda t: t["kind"] != "MGT"
        ):
            volumes.append(
                {
                    "label": target["device"].rsplit("/", 1)[-1],
                    "segment_kib": group["segment_kib"],
                    "owner": group["controller"].lower(),
                    "capacity": f" capacity={MGT_CAPACITY_GB} GB"
                    if target["kind"] == "MGT"
                    else "",
                    "lun": lun,
                }
            )
            lun += 1
        groups.append(
            {
                "array": group["array"],
                "name": group["name"],
                "raid_level": RAID_LEVEL.get(raid, "6"),
                "drives": " ".join(
                    f"{trays[d['enclosure']]},{d['drawer']},{d['slot']}" for d in group["drives"]
                ),
                "volumes": volumes,
            }
        )
    spares = [
        {"array": s["array"], "address": f"{trays[s['enclosure']]},{s['drawer']},{s['slot']}"}
        for s in plan["spares"]
    ]
    return {
        "volume_groups": groups,
        "spares": spares,
        # Every array maps its volumes to one host group: both servers of the pair.
        "host_group": plan["ssu"],
        "hosts": [server["hostname"] for server in plan["servers"]],
        "arrays": [array["name"] for array in plan["arrays"]],
        "drive_counts": {array["name"]: array["drives"] for array in plan["arrays"]},
    }


def mkfs_arguments(plan: dict, target: dict, mgs_nids: list[str]) -> list[str]:
    """mkfs.lustre's arguments for one target, with both servers as service nodes so clients
    know where to reconnect after a failover."""
    nids = {server["hostname"]: ",".join(server["nids"]) for server in plan["servers"]}
    arguments = []
    if target["kind"] == "MGT":
        arguments.append("--mgs")
    else:
        arguments += [
            f"--{target['kind'].lower()}",
            f"--fsname={plan['filesystem']}",
            f"--index={target['index']}",
        ]
        arguments += [f"--mgsnode={nid}" for nid in mgs_nids]
    arguments += [
        f"--servicenode={nids[target['primary']]}",
        f"--servicenode={nids[target['failover']]}",
    ]
    arguments.append(target["device"])
    return arguments


def target_list(plan: dict, mgs_nids: list[str]) -> list[dict]:
    """The targets in the order they must start: MGT, MDT, then OSTs, each with the argv of
    the commands the playbooks run for it (sent a server's whole list in one round trip)."""
    order = {"MGT": 0, "MDT": 1, "OST": 2}
    return [
        {
            **target,
            "mkfs": ["mkfs.lustre", *mkfs_arguments(plan, target, mgs_nids)],
            "tunefs": ["tunefs.lustre", "--dryrun", target["device"]],
            "mount": ["mount", "-t", "lustre", target["device"], target["mountpoint"]],
        }
        for target in sorted(plan["targets"], key=lambda t: (order[t["kind"]], t["index"]))
    ]
