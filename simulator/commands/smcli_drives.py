"""SMcli's drive commands (simulator/commands/smcli.py describes them): the drive table and
each drive's details, the long-running operations, and the drive service (locate LED,
reconstruction of a replaced drive)."""

from __future__ import annotations

from simulator.commands import Context
from simulator.commands.smcli_script import EXIT_EXECUTION, ScriptError, gigabytes
from simulator.rebuilds import rebuild_seconds
from simulator.topology import drive_at, touch, volume_group_health

# The drive table's ROLE, and the drive details' Mode (SANtricity's role states).
ROLES = {
    "unassigned": "Unassigned",
    "assigned": "Assigned",
    "replaced": "Assigned",
    "hot_spare": "Hot spare",
    "spare_in_use": "Hot spare (in use)",
}
MODES = {
    "unassigned": "Unassigned",
    "assigned": "Assigned",
    "replaced": "Assigned",
    "hot_spare": "Hot spare standby",
    "spare_in_use": "Hot spare in use",
}
OPERATIONS = {"rebuild": "Reconstruction", "copyback": "Copyback"}


def role_of(drive: dict, names: dict[str, str]) -> str:
    """A failed drive keeps the role it had (a member's, a spare's)."""
    state = drive["state"]
    if state == "failed":
        previous = drive.get("previous")
        state = previous if previous in names else ("assigned" if drive.get("vg") else "")
    return names.get(state, names["unassigned"])


def time_left(seconds: float) -> str:
    if seconds < 60:
        return "less than a minute"
    hours, minutes = divmod(int(seconds // 60), 60)
    return f"{hours} hr {minutes} min" if hours else f"{minutes} min"


class DriveCommands:
    """The drive commands of an SMcli session on one array."""

    ctx: Context
    state: dict
    array: dict

    def _drive(self, address: tuple[int, int, int]) -> dict:
        drive = drive_at(self.array, *address)
        if drive is None:
            tray, drawer, slot = address
            raise ScriptError(
                EXIT_EXECUTION,
                f"Error 16 - There is no drive at tray {tray}, drawer {drawer}, slot {slot}.",
            )
        return drive

    def show_drives(self, only: tuple[int, int, int] | None = None, details: bool = False) -> None:
        array = self.array
        if only:
            self._drive(only)
        size = int(array["drive_tb"] * 1e12)
        shown = []
        self.ctx.print("DRIVES------------------------------")
        self.ctx.print(
            "   TRAY, DRAWER, SLOT  STATUS     CAPACITY        ROLE           VOLUME GROUP"
        )
        for enclosure in array["enclosures"]:
            for key, drive in sorted(
                enclosure["drives"].items(), key=lambda kv: tuple(int(x) for x in kv[0].split(","))
            ):
                d, s = (int(x) for x in key.split(","))
                if only and only != (enclosure["tray"], d, s):
                    continue
                if drive["state"] == "failed":
                    status = "Failed"
                elif d in enclosure["drawers_offline"]:
                    status = "Missing"
                elif drive["state"] == "replaced":
                    status = "Replaced"
                else:
                    status = "Optimal"
                location = f"{enclosure['tray']}, {d}, {s}"
                self.ctx.print(
                    f"   {location:<18}  {status:<9}  {gigabytes(size):<14}  "
                    f"{role_of(drive, ROLES):<18} {drive['vg'] or ''}"
                )
                shown.append((enclosure["tray"], d, s, status, drive))
        if not details:
            return
        self.ctx.print("")
        self.ctx.print("   DETAILS")
        for tray, d, s, status, drive in shown:
            self.ctx.print(f"      Drive at Tray {tray}, Drawer {d}, Slot {s}")
            self.ctx.print(f"         Status:                   {status}")
            self.ctx.print(f"         Mode:                     {role_of(drive, MODES)}")
            if drive.get("vg"):
                self.ctx.print(f"         Associated volume group:  {drive['vg']}")
            self.ctx.print(
                f"         Locate:                   {'On' if drive.get('locate') else 'Off'}"
            )
            self.ctx.print("")

    def show_operations(self) -> None:
        """`show storageArray longRunningOperations`: volume groups under reconstruction or
        copyback, as SANtricity lists its long-running operations."""
        seconds = rebuild_seconds(self.state, self.array)
        rows = []
        for name, group in sorted(self.array["volume_groups"].items()):
            for key, label in OPERATIONS.items():
                operation = group.get(key)
                if operation:
                    elapsed = operation.get("elapsed", operation["progress"] * seconds / 100)
                    rows.append(
                        (name, label, f"{operation['progress']}% COMPLETED", seconds - elapsed)
                    )
        width = max([17] + [len(row[0]) + 2 for row in rows])
        self.ctx.print(
            f"{'LOGICAL DEVICES':<{width}} {'OPERATION':<17} {'STATUS':<14} TIME REMAINING"
        )
        for name, label, status, left in rows:
            self.ctx.print(f"{name:<{width}} {label:<17} {status:<14} {time_left(left)}")

    # -- drive service: locate, reconstruct -------------------------------------------------

    def locate_drive(self, address: tuple[int, int, int]) -> None:
        """One indicator light blinks per array: starting another moves it."""
        drive = self._drive(address)
        self.stop_locate()
        drive["locate"] = True

    def stop_locate(self) -> None:
        for enclosure in self.array["enclosures"]:
            for drive in enclosure["drives"].values():
                drive.pop("locate", None)

    def reconstruct_drive(self, address: tuple[int, int, int]) -> None:
        """Reconstruct a replaced member onto itself (group["rebuild"] with the drive as its
        own spare; simulator.rebuilds advances and finishes it)."""
        drive = self._drive(address)
        where = "tray {}, drawer {}, slot {}".format(*address)
        if drive["state"] == "failed":
            raise ScriptError(
                EXIT_EXECUTION,
                f"Error 16 - The drive at {where} has failed: replace it before reconstructing it.",
            )
        group = self.array["volume_groups"].get(drive.get("vg") or "")
        for member in group["drives"] if group else []:
            if (drive_at(self.array, *member) or {}).get("replaces") == list(address):
                raise ScriptError(
                    EXIT_EXECUTION,
                    f"Error 16 - The drive at {where} gets its data back by copyback from the "
                    "hot spare at tray {}, drawer {}, slot {}.".format(*member),
                )
        if drive["state"] != "replaced" or group is None or list(address) not in group["drives"]:
            raise ScriptError(
                EXIT_EXECUTION,
                f"Error 16 - The drive at {where} is not a replaced drive of a degraded volume "
                "group: there is nothing to reconstruct.",
            )
        if volume_group_health(self.array, group)["state"] == "failed":
            raise ScriptError(
                EXIT_EXECUTION,
                f'Error 16 - The volume group "{group["name"]}" has failed (more drives lost '
                f"than RAID {group['raid']} survives): it cannot be reconstructed.",
            )
        if group.get("rebuild"):
            raise ScriptError(
                EXIT_EXECUTION,
                f"Error 16 - A reconstruction is already in progress in volume group "
                f'"{group["name"]}".',
            )
        group["rebuild"] = {
            "progress": 0,
            "elapsed": 0.0,
            "spare": list(address),
            "replacing": list(address),
        }
        touch(self.array)
