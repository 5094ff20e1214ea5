"""Build a planned SSU or MDS pair on the virtual rack in one call, without the playbooks.

For the demo, the benchmark and the tests that need a populated rack quickly: volume groups
and volumes on the arrays, targets formatted with `--servicenode` for both servers, mounted
on their primary servers. It makes the same changes as the virtual commands
(`simulator.operations`); the end-to-end path through the commands is tested separately.
"""

from __future__ import annotations

from simulator import operations
from simulator.rack import Rack
from simulator.topology import drive_address, parse_plan_raid

MGT_BYTES = 16 * 10**9


def plan_mgsnodes(rack: Rack, plan: dict) -> list[str]:
    """NIDs of the MGS: the MDS pair's servers (from this plan if it carries the MGT)."""
    mgt = next((t for t in plan["targets"] if t["kind"] == "MGT"), None)
    if mgt:
        servers = {s["hostname"]: s for s in plan["servers"]}
        return [servers[mgt["primary"]]["nids"][0], servers[mgt["failover"]]["nids"][0]]
    existing = rack.state["targets"].get("MGS")
    return list(existing["servicenodes"]) if existing else []


def build(rack: Rack, plan: dict, *, mount: bool = True) -> None:
    """Volume groups, volumes and formatted targets of `plan`; mounted on primaries."""
    state = rack.state
    if plan["ssu"] not in state["pairs"]:
        rack.add(plan)
    servers = {s["hostname"]: s for s in plan["servers"]}
    by_group: dict[str, list[dict]] = {}
    for target in plan["targets"]:
        by_group.setdefault(target["volume_group"], []).append(target)
    mgsnodes = plan_mgsnodes(rack, plan)
    for group in plan["volume_groups"]:
        array = state["arrays"][group["array"]]
        level, _width, _data = parse_plan_raid(group.get("raid", plan.get("raid", "8+2")))
        drives = [
            drive_address(array, d["enclosure"], d["drawer"], d["slot"]) for d in group["drives"]
        ]
        if group["name"] not in array["volume_groups"]:
            operations.create_volume_group(state, array["name"], drives, level, group["name"])
        # The MGT shares the MDS group with the MDT: a small volume first, the MDT takes the rest.
        for target in sorted(by_group.get(group["name"], []), key=lambda t: t["kind"] != "MGT"):
            volume = target["device"].rsplit("/", 1)[-1]
            if not operations.find_volume(state, volume):
                operations.create_volume(
                    state,
                    array["name"],
                    group["name"],
                    volume,
                    capacity_bytes=MGT_BYTES if target["kind"] == "MGT" else None,
                    segment_kib=int(group.get("segment_kib", plan.get("segment_kib", 128))),
                    owner=group.get("controller", target.get("controller")),
                )
    for spare in plan.get("spares", []):
        array = state["arrays"][spare["array"]]
        address = drive_address(array, spare["enclosure"], spare["drawer"], spare["slot"])
        drive = operations.drive_at(array, *address)
        if drive and drive["state"] == "unassigned":
            operations.set_hot_spare(state, array["name"], address, True)
    order = {"MGT": 0, "MDT": 1, "OST": 2}
    for target in sorted(plan["targets"], key=lambda t: order[t["kind"]]):
        primary = target["primary"]
        service = [servers[target["primary"]]["nids"][0], servers[target["failover"]]["nids"][0]]
        if target["label"] not in state["targets"]:
            formatted = operations.format_target(
                state,
                primary,
                target["device"],
                kind=target["kind"],
                fsname=plan["filesystem"],
                index=target["index"],
                mgsnodes=[] if target["kind"] == "MGT" else mgsnodes,
                servicenodes=service,
                reformat=False,
                now=rack.now,
            )
            formatted["primary"] = primary
            formatted["failover"] = target["failover"]
        if mount and not state["targets"][target["label"]].get("mounted_on"):
            operations.mount_target(
                state, primary, target["device"], target["mountpoint"], rack.now
            )
    rack.render(list(servers))
