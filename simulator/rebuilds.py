"""An array's long-running drive operations as the clock advances them: a reconstruction
(onto a hot spare, or onto a replaced drive), and a copyback from a hot spare in use to the drive
that replaced the failed one. simulator.failures starts them when drives fail or are replaced;
SMcli's `start drive [t,d,s] reconstruct` starts one; the workload's clock (`advance`) moves
them on."""

from __future__ import annotations

from simulator.topology import drive_at, touch

REBUILD_MB_S = 150.0


def rebuild_seconds(state: dict, array: dict) -> float:
    """Simulated seconds one reconstruction or copyback takes on `array`: the rack's
    `rebuild_seconds` (`serve --rebuild-seconds`, for tests and demos), else a whole drive
    written at about 150 MB/s (hours for a 4 TB drive)."""
    return state.get("rebuild_seconds") or array["drive_tb"] * 1e12 / (REBUILD_MB_S * 1e6)


def advance(state: dict, dt: float) -> None:
    """Reconstructions (onto a hot spare or a replaced drive) and copybacks (from a spare in
    use to the drive that replaced the failed one) progress with the time spent on them."""
    for array in state["arrays"].values():
        seconds = rebuild_seconds(state, array)
        for group in array["volume_groups"].values():
            for kind, finish in (("rebuild", finish_rebuild), ("copyback", finish_copyback)):
                operation = group.get(kind)
                if not operation:
                    continue
                # Racks saved before `elapsed` existed carry on from their percentage.
                elapsed = operation.get("elapsed", operation["progress"] * seconds / 100)
                operation["elapsed"] = elapsed + dt
                operation["progress"] = min(100, int(100 * operation["elapsed"] / seconds))
                touch(array)
                if operation["elapsed"] >= seconds:
                    finish(array, group)


def finish_rebuild(array: dict, group: dict) -> None:
    """Reconstruction done. Onto a replaced drive: it is an ordinary member. Onto a hot spare:
    the spare is a member in the failed drive's place, still "in use" (it goes back to the
    spares after the copyback to the drive that replaces the failed one)."""
    rebuild = group["rebuild"]
    touch(array)
    group["drives"] = [
        rebuild["spare"] if d == rebuild["replacing"] else d for d in group["drives"]
    ]
    drive = drive_at(array, *rebuild["spare"])
    if drive:
        if rebuild["spare"] == rebuild["replacing"]:
            drive["state"] = "assigned"
        else:
            drive["replaces"] = list(rebuild["replacing"])
    group["rebuild"] = None


def start_copyback(array: dict, group: dict) -> list[int] | None:
    """Start copying a spare in use back to the drive that replaced the one it stands for, if
    no copyback runs in the group yet (one at a time; the next starts when it ends). Returns
    the spare's address."""
    if group.get("copyback"):
        return None
    for member in group["drives"]:
        spare = drive_at(array, *member)
        if not spare or spare["state"] != "spare_in_use" or not spare.get("replaces"):
            continue
        new = drive_at(array, *spare["replaces"])
        if new and new["state"] == "replaced":
            group["copyback"] = {
                "progress": 0,
                "elapsed": 0.0,
                "spare": list(member),
                "to": list(spare["replaces"]),
            }
            touch(array)
            return list(member)
    return None


def copy_back(array: dict, group: dict, spare_address: list[int], to: list[int]) -> None:
    """The replacement drive becomes the member, the spare a standby spare again."""
    touch(array)
    group["drives"] = [list(to) if d == list(spare_address) else d for d in group["drives"]]
    drive = drive_at(array, *to)
    if drive:
        drive["state"] = "assigned"
        drive["vg"] = group["name"]
    spare = drive_at(array, *spare_address)
    if spare:
        spare["state"] = "hot_spare"
        spare["vg"] = None
        spare.pop("replaces", None)


def finish_copyback(array: dict, group: dict) -> None:
    """Copyback done; the next waiting one (another replaced drive of the group) starts."""
    copyback = group["copyback"]
    copy_back(array, group, copyback["spare"], copyback["to"])
    group["copyback"] = None
    start_copyback(array, group)
