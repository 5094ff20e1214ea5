"""SMcli: the array command-line tool, a subset of the E-series (SANtricity) script commands.

Invocation as SANtricity's: `SMcli -n <array name> -c "<commands>;"`, or `SMcli <address>
[<address>] -c ...` where an address is the array name or its controllers' management names
`<array>-a` / `<array>-b`; `-f <file>` reads the script from a file; `-S` drops the progress
lines. Script commands (case-insensitive keywords, `;` between commands):

    show storageArray [healthStatus | summary | profile | longRunningOperations];
    show allDrives [summary];            show drive [t,d,s];
    start drive [t,d,s] locate;          stop drive locate;
    start drive [t,d,s] reconstruct;
    show allVolumeGroups;                show volumeGroup ["name"];
    show allVolumes [summary];           show volume ["name"];
    show allControllers;                 show controller [a|b];
    create volumeGroup drives=(t,d,s t,d,s ...) raidLevel=(0|1|3|5|6) userLabel="name"
        [drawerLossProtect=(TRUE|FALSE)] [trayLossProtect=(TRUE|FALSE)];
    create volume volumeGroup="vg" userLabel="name" [capacity=N (GB|TB|MB|Bytes)]
        [segmentSize=N] [owner=(a|b)];
    delete volume ["name"];              delete volumeGroup ["name"];
    set drive [t,d,s] hotSpare=(TRUE|FALSE);
    create hostGroup userLabel="name";
    create host userLabel="name" hostGroup="group" [hostType=N];
    create mapping volume="name" logicalUnitNumber=N hostGroup="group";
    show allHostGroups;                  show storageArray lunMappings;

Host mapping as SANtricity's storage partitions: while an array has no mapping at all every
volume is visible to every cabled server (the Default Group); once it has mappings, a server
sees only the volumes mapped to a host group it belongs to.

Drives: `show allDrives summary;` is the drive table (`TRAY, DRAWER, SLOT  STATUS  CAPACITY
ROLE  VOLUME GROUP`); `show allDrives;` adds a DETAILS block per drive and `show drive
[t,d,s];` prints its row and block:

      Drive at Tray 0, Drawer 1, Slot 5
         Status:                   Replaced
         Mode:                     Assigned
         Associated volume group:  ssu01-a-vg00
         Locate:                   On

Status is Optimal, Failed, Missing (its drawer is out) or Replaced (a blank drive in a
member's slot: it holds no data until its reconstruction ends, or until the copyback to it
ends). Mode is SANtricity's role: Assigned, Unassigned, Hot spare standby or Hot spare in use
(the table's roles: Hot spare, Hot spare (in use)). `start drive [t,d,s] locate;` blinks the
drive's indicator light (one drive per array: starting another moves it; Locate: On) and
`stop drive locate;` (no drive: as SANtricity's) turns it off; an empty slot is an execution
error. Putting a new drive in a failed one's slot is the technician's act (`python -m
simulator replace-drive`, `simulator.failures.replace_drive`): a spare in use for it is
copied back by the array itself; otherwise the drive is Replaced until `start drive [t,d,s]
reconstruct;`, an execution error on a drive that is still failed or that is not a replaced
member of a degraded (not failed) volume group. `show volumeGroup` prints an
`Operation:  Reconstruction (37% complete)` (or Copyback) line while one runs, and
`show storageArray longRunningOperations;` one row per volume group with one:

    LOGICAL DEVICES   OPERATION         STATUS         TIME REMAINING
    ssu01-a-vg00      Reconstruction    37% COMPLETED  1 hr 5 min

(TIME REMAINING: `N min` under an hour, `less than a minute` at the end). Each takes the
rack's `rebuild_seconds` (`serve --rebuild-seconds`), else a whole drive at 150 MB/s. A group
with replaced drives also prints `Replaced drives:  N`. As SANtricity documents them: the
commands' syntax (`stop drive locate` has no parameter), the longRunningOperations columns and
`N% COMPLETED`, the drive roles; the `Locate:` and `Operation:` lines and the `1 hr 5 min`
form are this simulator's.

Drive addresses are tray, drawer, slot with trays numbered from 0 (controller enclosure) and
drawers and slots from 1, as the E5600 family numbers them. Exit codes are SANtricity's:
0 success, 1 invalid usage, 2 script file missing, 4 no array at the address, 9 array name
not known, 13 invalid script syntax, 14 cannot communicate (both controllers down),
16 execution error. Output wording follows SANtricity where known and is kept short
otherwise.
"""

from __future__ import annotations

import getopt
import re
from pathlib import Path

from simulator import operations
from simulator.commands import Context
from simulator.commands.smcli_drives import DriveCommands
from simulator.commands.smcli_script import (
    DRIVE_RE,
    EXIT_COMMUNICATE,
    EXIT_EXECUTION,
    EXIT_NAME,
    EXIT_NO_ARRAY,
    EXIT_NO_SCRIPT,
    EXIT_SYNTAX,
    EXIT_USAGE,
    UNITS,
    ScriptError,
    gigabytes,
    name_argument,
    parse_attributes,
    parse_drives,
    split_commands,
)
from simulator.topology import drive_at, volume_group_health


class Session(DriveCommands):
    def __init__(self, ctx: Context, state: dict, array: dict):
        self.ctx = ctx
        self.state = state
        self.array = array

    # -- show --------------------------------------------------------------------------------

    def show_health(self) -> None:
        array = self.array
        problems = []
        for name, status in sorted(array["controllers"].items()):
            if status != "optimal":
                problems.append(f"Offline Controller\n   Controller in tray 0, slot {name}")
        for enclosure in array["enclosures"]:
            for drawer in enclosure["drawers_offline"]:
                problems.append(f"Drawer Failed\n   Tray {enclosure['tray']}, drawer {drawer}")
            for key, drive in sorted(enclosure["drives"].items()):
                if drive["state"] == "failed":
                    d, s = key.split(",")
                    problems.append(
                        f"Failed Drive\n   Tray: {enclosure['tray']}, Drawer: {d}, Slot: {s}"
                    )
        for name, group in sorted(array["volume_groups"].items()):
            health = volume_group_health(array, group)
            if health["state"] != "optimal":
                label = {
                    "degraded": "Degraded Volume Group",
                    "critical": "Degraded Volume Group (no redundancy)",
                    "failed": "Failed Volume Group",
                }[health["state"]]
                problems.append(f"{label}\n   Volume group: {name}")
        if not problems:
            self.ctx.print("Storage array health status = optimal.")
        else:
            self.ctx.print("The following failures have been found:")
            for problem in problems:
                self.ctx.print(problem)

    def show_summary(self) -> None:
        array = self.array
        drives = sum(len(e["drives"]) for e in array["enclosures"])
        self.ctx.print(f"STORAGE ARRAY {array['name']}")
        self.ctx.print(f"   Chassis:               {array['model']}")
        self.ctx.print(f"   Expansion trays:       {', '.join(array['expansions']) or 'none'}")
        self.ctx.print(f"   Number of drives:      {drives}")
        self.ctx.print(f"   Number of volume groups: {len(array['volume_groups'])}")
        self.ctx.print(f"   Number of volumes:     {len(array['volumes'])}")
        for name, status in sorted(array["controllers"].items()):
            self.ctx.print(
                f"   Controller {name}:          {'Online' if status == 'optimal' else 'Failed'}"
            )

    def show_groups(self, only: str | None = None) -> None:
        array = self.array
        groups = array["volume_groups"]
        if only and only not in groups:
            raise ScriptError(
                EXIT_EXECUTION, f'Error 16 - The volume group "{only}" does not exist.'
            )
        for name, group in sorted(groups.items()):
            if only and name != only:
                continue
            health = volume_group_health(array, group)
            capacity = operations.group_capacity_bytes(array, group)
            free = operations.group_free_bytes(array, group)
            self.ctx.print(f"VOLUME GROUP {name}")
            self.ctx.print(f"   Status:              {health['state'].capitalize()}")
            if health["operation"]:
                self.ctx.print(
                    f"   Operation:           {health['operation'].capitalize()} "
                    f"({health['progress']}% complete)"
                )
            self.ctx.print(f"   RAID level:          {group['raid']}")
            self.ctx.print(
                f"   Drives:              {group['width']} ({group['data_drives']} data)"
            )
            self.ctx.print(f"   Failed drives:       {health['failed_drives']}")
            self.ctx.print(f"   Missing drives:      {health['missing_drives']}")
            if health["replaced_drives"]:
                self.ctx.print(f"   Replaced drives:     {health['replaced_drives']}")
            self.ctx.print(f"   Redundancy left:     {health['redundancy_left']}")
            self.ctx.print(f"   Capacity:            {gigabytes(capacity)}")
            self.ctx.print(f"   Free capacity:       {gigabytes(free)}")
            self.ctx.print(
                "   Drive locations:     "
                + " ".join(",".join(str(x) for x in d) for d in group["drives"])
            )
            self.ctx.print("")

    def show_volumes(self, only: str | None = None) -> None:
        array = self.array
        if only and only not in array["volumes"]:
            raise ScriptError(EXIT_EXECUTION, f'Error 16 - The volume "{only}" does not exist.')
        self.ctx.print(
            "VOLUME NAME          STATUS     CAPACITY            RAID LEVEL  "
            "VOLUME GROUP      SEGMENT  OWNER"
        )
        for name, volume in sorted(array["volumes"].items()):
            if only and name != only:
                continue
            group = array["volume_groups"][volume["vg"]]
            health = volume_group_health(array, group)["state"].capitalize()
            owner = operations.topology.controller_serving(array, volume) or "-"
            self.ctx.print(
                f"{name:<20} {health:<10} {gigabytes(volume['capacity_bytes']):<19} "
                f"{group['raid']:<11} {volume['vg']:<17} "
                f"{volume['segment_kib']:>4} KB  {owner}"
            )

    def show_controllers(self, only: str | None = None) -> None:
        array = self.array
        for name, status in sorted(array["controllers"].items()):
            if only and name != only.upper():
                continue
            self.ctx.print(f"Controller in Tray 0, Slot {name}")
            self.ctx.print(
                f"   Status:              {'Online' if status == 'optimal' else 'Failed'}"
            )
            owned = [
                v
                for v in array["volumes"].values()
                if operations.topology.controller_serving(array, v) == name
            ]
            self.ctx.print(f"   Volumes owned:       {len(owned)}")
            for host, server in sorted(self.state["servers"].items()):
                link = server["sas"].get(array["name"], {}).get(name)
                if link is None:
                    continue
                self.ctx.print(f"   Host interface SAS to {host}: {'Up' if link else 'Down'}")

    # -- create / delete / set ------------------------------------------------------------

    def create_group(self, text: str) -> None:
        attrs = parse_attributes(text)
        for required in ("drives", "raidlevel", "userlabel"):
            if required not in attrs:
                raise ScriptError(EXIT_SYNTAX, f"Error 13 - create volumeGroup needs {required}")
        try:
            operations.create_volume_group(
                self.state,
                self.array["name"],
                parse_drives(attrs["drives"]),
                attrs["raidlevel"],
                attrs["userlabel"],
            )
        except operations.OperationError as problem:
            raise ScriptError(EXIT_EXECUTION, f"Error 16 - {problem}") from None

    def create_volume(self, text: str) -> None:
        attrs = parse_attributes(text)
        for required in ("volumegroup", "userlabel"):
            if required not in attrs:
                raise ScriptError(EXIT_SYNTAX, f"Error 13 - create volume needs {required}")
        capacity = None
        if "capacity" in attrs:
            match = re.search(
                r"capacity\s*=\s*([\d.]+)\s*(bytes|kb|mb|gb|tb)?\b", text, re.IGNORECASE
            )
            if not match:
                raise ScriptError(EXIT_SYNTAX, f"Error 13 - invalid capacity {attrs['capacity']}")
            capacity = int(float(match.group(1)) * UNITS[(match.group(2) or "bytes").lower()])
        segment = int(attrs.get("segmentsize", "128"))
        owner = attrs.get("owner")
        try:
            operations.create_volume(
                self.state,
                self.array["name"],
                attrs["volumegroup"],
                attrs["userlabel"],
                capacity_bytes=capacity,
                segment_kib=segment,
                owner=owner.upper() if owner else None,
            )
        except operations.OperationError as problem:
            raise ScriptError(EXIT_EXECUTION, f"Error 16 - {problem}") from None

    def _partitions(self) -> tuple[dict, dict]:
        return self.array.setdefault("host_groups", {}), self.array.setdefault("mappings", {})

    def create_host_group(self, text: str) -> None:
        label = parse_attributes(text).get("userlabel")
        if not label:
            raise ScriptError(EXIT_SYNTAX, "Error 13 - create hostGroup needs userLabel")
        groups, _ = self._partitions()
        if label in groups:
            raise ScriptError(
                EXIT_EXECUTION, f'Error 16 - The host group "{label}" already exists.'
            )
        groups[label] = []

    def create_host(self, text: str) -> None:
        attrs = parse_attributes(text)
        label, group = attrs.get("userlabel"), attrs.get("hostgroup")
        if not label or not group:
            raise ScriptError(EXIT_SYNTAX, "Error 13 - create host needs userLabel and hostGroup")
        groups, _ = self._partitions()
        if group not in groups:
            raise ScriptError(
                EXIT_EXECUTION, f'Error 16 - The host group "{group}" does not exist.'
            )
        if any(label in hosts for hosts in groups.values()):
            raise ScriptError(EXIT_EXECUTION, f'Error 16 - The host "{label}" already exists.')
        groups[group].append(label)

    def create_mapping(self, text: str) -> None:
        attrs = parse_attributes(text)
        volume, group = attrs.get("volume"), attrs.get("hostgroup")
        lun = attrs.get("logicalunitnumber")
        if not volume or not group or lun is None or not lun.isdigit():
            raise ScriptError(
                EXIT_SYNTAX,
                "Error 13 - create mapping needs volume, logicalUnitNumber and hostGroup",
            )
        groups, mappings = self._partitions()
        if volume not in self.array["volumes"]:
            raise ScriptError(EXIT_EXECUTION, f'Error 16 - The volume "{volume}" does not exist.')
        if group not in groups:
            raise ScriptError(
                EXIT_EXECUTION, f'Error 16 - The host group "{group}" does not exist.'
            )
        if volume in mappings:
            raise ScriptError(
                EXIT_EXECUTION, f'Error 16 - The volume "{volume}" is already mapped.'
            )
        if any(m["host_group"] == group and m["lun"] == int(lun) for m in mappings.values()):
            raise ScriptError(
                EXIT_EXECUTION, f"Error 16 - LUN {lun} is already used in host group {group}."
            )
        mappings[volume] = {"host_group": group, "lun": int(lun)}

    def show_host_groups(self) -> None:
        groups, _ = self._partitions()
        for name, hosts in groups.items():
            self.ctx.print(f"HOST GROUP {name}")
            for host in hosts:
                self.ctx.print(f"   Host: {host}")
            self.ctx.print("")

    def show_mappings(self) -> None:
        _, mappings = self._partitions()
        self.ctx.print("VOLUME NAME          LUN  ACCESSIBLE BY")
        for volume, mapping in sorted(mappings.items()):
            self.ctx.print(f"{volume:<20} {mapping['lun']:<4} Host Group {mapping['host_group']}")

    def execute(self, command: str) -> None:
        words = command.split()
        lowered = [w.lower() for w in words]
        rest = command.split(None, 2)[2] if len(words) > 2 else ""
        try:
            if lowered[:2] == ["show", "storagearray"]:
                what = lowered[2] if len(lowered) > 2 else "summary"
                if what == "lunmappings":
                    self.show_mappings()
                elif what == "longrunningoperations":
                    self.show_operations()
                elif what == "healthstatus":
                    self.show_health()
                else:
                    self.show_summary()
            elif lowered[:2] == ["show", "alldrives"]:
                self.show_drives(details="summary" not in lowered[2:])
            elif lowered[:2] == ["show", "drive"]:
                match = re.search(DRIVE_RE, command)
                if not match:
                    raise ScriptError(EXIT_SYNTAX, "Error 13 - show drive needs [tray,drawer,slot]")
                self.show_drives(tuple(int(x) for x in match.groups()), details=True)
            elif re.match(r"start\s+drive\b", command, re.IGNORECASE):
                match = re.fullmatch(
                    rf"start\s+drive\s*{DRIVE_RE}\s*(locate|reconstruct)", command, re.IGNORECASE
                )
                if not match:
                    raise ScriptError(
                        EXIT_SYNTAX,
                        "Error 13 - start drive [tray,drawer,slot] (locate | reconstruct)",
                    )
                address = tuple(int(x) for x in match.groups()[:3])
                if match.group(4).lower() == "locate":
                    self.locate_drive(address)
                else:
                    self.reconstruct_drive(address)
            elif lowered[:2] == ["stop", "drive"]:
                if lowered != ["stop", "drive", "locate"]:
                    raise ScriptError(
                        EXIT_SYNTAX,
                        "Error 13 - stop drive locate takes no drive: it turns off the light "
                        "that start drive locate turned on.",
                    )
                self.stop_locate()
            elif lowered[:2] == ["show", "allvolumegroups"]:
                self.show_groups()
            elif lowered[:2] == ["show", "volumegroup"]:
                self.show_groups(name_argument(rest))
            elif lowered[:2] == ["show", "allvolumes"]:
                self.show_volumes()
            elif lowered[:2] == ["show", "volume"]:
                self.show_volumes(name_argument(rest))
            elif lowered[:2] == ["show", "allcontrollers"]:
                self.show_controllers()
            elif lowered[:2] == ["show", "controller"]:
                match = re.search(r"\[\s*([abAB])\s*\]", command)
                self.show_controllers(match.group(1) if match else None)
            elif lowered[:2] == ["show", "allhostgroups"]:
                self.show_host_groups()
            elif lowered[:2] == ["create", "hostgroup"]:
                self.create_host_group(rest)
            elif lowered[:2] == ["create", "host"]:
                self.create_host(rest)
            elif lowered[:2] == ["create", "mapping"]:
                self.create_mapping(rest)
            elif lowered[:2] == ["create", "volumegroup"]:
                self.create_group(rest)
            elif lowered[:2] == ["create", "volume"]:
                self.create_volume(rest)
            elif lowered[:2] == ["delete", "volume"]:
                operations.delete_volume(self.state, self.array["name"], name_argument(rest) or "")
            elif lowered[:2] == ["delete", "volumegroup"]:
                operations.delete_volume_group(
                    self.state, self.array["name"], name_argument(rest) or ""
                )
            elif lowered[:2] == ["set", "drive"]:
                match = re.search(
                    r"\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\]\s*hotspare\s*=\s*"
                    r"(true|false)",
                    command,
                    re.IGNORECASE,
                )
                if not match:
                    raise ScriptError(
                        EXIT_SYNTAX, "Error 13 - set drive [t,d,s] hotSpare=TRUE|FALSE"
                    )
                address = tuple(int(x) for x in match.groups()[:3])
                operations.set_hot_spare(
                    self.state, self.array["name"], address, match.group(4).lower() == "true"
                )
            else:
                raise ScriptError(
                    EXIT_SYNTAX, f'Error 13 - The script command "{command}" is not recognized.'
                )
        except operations.OperationError as problem:
            raise ScriptError(EXIT_EXECUTION, f"Error 16 - {problem}") from None


def _resolve(state: dict, names: list[str], by_name: str | None) -> tuple[dict | None, int]:
    if by_name:
        array = state["arrays"].get(by_name)
        return (array, 0) if array else (None, EXIT_NAME)
    for name in names:
        base = re.sub(r"-[ab]$", "", name)
        array = state["arrays"].get(name) or state["arrays"].get(base)
        if array:
            return array, 0
    return None, EXIT_NO_ARRAY


def run(ctx: Context, argv: list[str]) -> int:
    try:
        pairs, rest = getopt.gnu_getopt(argv, "n:c:f:o:Se:p:", [])
    except getopt.GetoptError as problem:
        ctx.error(f"SMcli: {problem}\nSMcli failed.")
        return EXIT_USAGE
    options = dict(pairs)
    quiet = "-S" in options
    if "-c" in options:
        script = options["-c"]
    elif "-f" in options:
        path = Path(options["-f"])
        if not path.exists():
            ctx.error(f"Script file {path} does not exist.\nSMcli failed.")
            return EXIT_NO_SCRIPT
        script = path.read_text()
    else:
        ctx.error(
            "Usage: SMcli <DNS-network-name-or-IP-address> [<DNS-network-name-or-IP-"
            'address>] [-c "<command>;[<command2>;...]"] [-n <storage-array-name>] '
            "[-f <scriptfile>] [-o <outputfile>] [-S]\nSMcli failed."
        )
        return EXIT_USAGE
    try:
        commands = split_commands(script)
    except ScriptError as problem:
        ctx.error(f"{problem}\n\nSMcli failed.")
        return problem.code
    # A script of `show` commands only reports (the sensors' every round): a shared lock.
    reporting = all(command.lower().startswith("show ") for command in commands)
    with ctx.rack(check_host=False, read_only=reporting) as rack:
        array, code = _resolve(rack.state, rest, options.get("-n"))
        if array is None:
            target = options.get("-n") or " ".join(rest)
            ctx.error(f"SMcli failed to find storage array {target}.\nSMcli failed.")
            return code
        if all(status != "optimal" for status in array["controllers"].values()):
            ctx.error(
                "Error 14 - The controllers of the storage array cannot be reached.\nSMcli failed."
            )
            return EXIT_COMMUNICATE
        session = Session(ctx, rack.state, array)
        try:
            if not quiet:
                ctx.print(
                    "Performing syntax check...\n\nSyntax check complete.\n\nExecuting script...\n"
                )
            for command in commands:
                session.execute(command)
        except ScriptError as problem:
            ctx.error(f"{problem}\n\nSMcli failed.")
            return problem.code
        pair = rack.state["pairs"].get(array["pair"])
        if pair and not reporting:
            rack.render(pair["servers"])
    if not quiet:
        ctx.print("\nScript execution complete.\n\nSMcli completed successfully.")
    return 0


__all__ = ["run", "drive_at"]
