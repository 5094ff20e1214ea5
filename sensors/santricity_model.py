"""One array's REST answers in Ostara's words (the `santricity` collector, sensors.santricity):
the `array` points with the ids and state words of the SMcli collector (sensors.arrays), the
analysed statistics under Ostara's field names, and the MEL events with the object they name.
"""

from __future__ import annotations

from sensors import schema
from sensors.arrays import OK_STATES, ArrayComponent
from sensors.lineproto import line, series
from sensors.rounds import Round

CONTROLLER_NAMES = ("A", "B")
IDLE_ACTIONS = {"none", "__UNDEFINED"}
# A volume group's operation in the SMcli collector's words (`Operation: Reconstruction`).
OPERATIONS = {
    "reconstructing": "reconstruction",
    "reconstructingCritical": "reconstruction",
    "copyback": "copyback",
}
# A drive in a drawer that is pulled out: SANtricity's REST says removed, SMcli Missing.
DRIVE_STATES = {"removed": "missing"}
RAID_REDUNDANCY = {
    "raid0": 0,
    "raid1": 1,
    "raid3": 1,
    "raid5": 1,
    "raid6": 2,
    "raidDiskPool": 2,
}
CRITICAL_PRIORITIES = {"priorityCritical", "priorityEmergency", "priorityAlert"}
_IO_FIGURES = {
    "readIOps": "read_iops",
    "writeIOps": "write_iops",
    "readThroughput": "read_mbps",  # MB/s as the API gives it
    "writeThroughput": "write_mbps",
}
VOLUME_FIGURES = {
    **_IO_FIGURES,
    "readResponseTime": "read_latency_ms",  # ms as the API gives it
    "writeResponseTime": "write_latency_ms",
}
CONTROLLER_FIGURES = {
    **_IO_FIGURES,
    "cpuAvgUtilization": "cpu_percent",
    "cacheHitBytesPercent": "cache_hit_percent",
}
INTERFACE_FIGURES = {**_IO_FIGURES, "queueDepthTotal": "queue_depth"}


class Answers:
    """What one controller said in one round."""

    def __init__(self) -> None:
        self.inventory: dict = {}
        self.pools: list[dict] = []
        self.volumes: list[dict] = []
        self.progress: dict[str, list[dict]] = {}
        self.statistics: dict[str, list[dict]] = {}
        self.events: list[dict] = []
        self.events_read = False  # False: the event log did not answer this round
        # The log no longer holds the last event seen: it started again, read from its start.
        self.events_restarted = False
        self.problems: list[str] = []


class ArrayModel:
    """One array's answers in Ostara's words: the ids and state words of the SMcli collector."""

    def __init__(self, name: str, answers: Answers) -> None:
        self.name = name
        self.answers = answers
        inventory = answers.inventory
        trays = {t["trayRef"]: int(t["trayId"]) for t in inventory.get("trays", [])}
        self._slots_per_drawer = {
            int(t["trayId"]): int(t["numDriveSlots"]) // int(t["numDrawers"])
            for t in inventory.get("trays", [])
            if t.get("numDrawers") and t.get("numDriveSlots")
        }
        drawers = {
            d["drawerRef"]: int(d["physicalLocation"]["slot"]) for d in inventory.get("drawers", [])
        }
        self.drives = list(inventory.get("drives", []))
        self.drive_ids: dict[str, str] = {}  # driveRef -> "tray,drawer,slot"
        self._by_tray_slot: dict[tuple[int, int], str] = {}
        for drive in self.drives:
            location = drive["physicalLocation"]
            tray = trays.get(location["trayRef"], 0)
            parent = (location.get("locationParent") or {}).get("symbolRef")
            drawer = drawers.get(parent, 0)
            ident = f"{tray},{drawer},{int(location['locationPosition'])}"
            self.drive_ids[drive["driveRef"]] = ident
            self._by_tray_slot[(tray, int(location["slot"]))] = ident
        self.controllers = list(inventory.get("controllers", []))
        self.controller_names = {c["controllerRef"]: controller_letter(c) for c in self.controllers}
        self.interface_names = host_interface_names(self.controllers)
        self.group_names = {p["id"]: str(p.get("name") or p.get("label")) for p in answers.pools}

    def components(self) -> list[ArrayComponent]:
        found = []
        for drive in self.drives:
            state = DRIVE_STATES.get(drive["status"], str(drive["status"]).lower())
            found.append(
                ArrayComponent(
                    self.name, "drive", self.drive_ids[drive["driveRef"]], state, state in OK_STATES
                )
            )
        for pool in sorted(self.answers.pools, key=lambda p: self.group_names[p["id"]]):
            found.append(self._group(pool))
        for controller in sorted(self.controllers, key=controller_letter):
            status = str(controller["status"])
            state = "online" if status == "optimal" else status.lower()
            found.append(
                ArrayComponent(
                    self.name,
                    "controller",
                    controller_letter(controller),
                    state,
                    state in OK_STATES,
                )
            )
        return found

    def _group(self, pool: dict) -> ArrayComponent:
        state = str(pool.get("raidStatus") or "unknown").lower()
        if state == "degraded":
            # SANtricity has one word for "degraded" and "no redundancy left"; the SMcli
            # collector says `critical` for the second: members failed or blank (replaced) as
            # many as the RAID level survives.
            lost = sum(
                1
                for d in self.drives
                if d.get("currentVolumeGroupRef") == pool["id"]
                and d["status"] in ("failed", "replaced")
                and not d.get("hotSpare")
            )
            redundancy = RAID_REDUNDANCY.get(str(pool.get("raidLevel")), 0)
            if redundancy and lost >= redundancy:
                state = "critical"
        operation, progress = "", None
        for step in self.answers.progress.get(pool["id"], []):
            action = str(step.get("currentAction") or "none")
            if action in IDLE_ACTIONS:
                continue
            operation = OPERATIONS.get(action, action.lower())
            progress = int(step.get("progressPercentage") or 0)
            break
        return ArrayComponent(
            self.name,
            "volume_group",
            self.group_names[pool["id"]],
            state,
            state in OK_STATES,
            operation,
            progress,
        )

    def add_statistics(self, rnd: Round) -> None:
        statistics = self.answers.statistics
        for item in statistics.get("volume", []):
            tags = {
                schema.ARRAY: self.name,
                schema.VOLUME: str(item.get("volumeName") or item.get("volumeId")),
                schema.VOLUME_GROUP: self.group_names.get(item.get("poolId"), ""),
            }
            rnd.add("array_volume", tags, figures(item, VOLUME_FIGURES))
        for item in statistics.get("drive", []):
            ident = self.drive_ids.get(item.get("diskId"))
            if ident is None:
                continue  # a drive pulled since the inventory was read
            rnd.add(
                "array_drive",
                {schema.ARRAY: self.name, schema.ID: ident},
                figures(item, VOLUME_FIGURES),
            )
        for item in statistics.get("controller", []):
            controller = self.controller_names.get(item.get("controllerId"))
            if controller is None:
                continue
            tags = {schema.ARRAY: self.name, schema.CONTROLLER: controller}
            rnd.add("array_controller", tags, figures(item, CONTROLLER_FIGURES))
        for item in statistics.get("interface", []):
            # Named by its ref only: the inventory's host interfaces say whose port it is.
            ref = str(item.get("interfaceId"))
            controller, interface = self.interface_names.get(ref, ("", ref))
            tags = {
                schema.ARRAY: self.name,
                schema.CONTROLLER: controller,
                schema.INTERFACE: interface,
            }
            rnd.add("array_interface", tags, figures(item, INTERFACE_FIGURES))

    def add_events(self, rnd: Round, last: int | None) -> int | None:
        """One point per event newer than `last`; returns the newest sequence number seen."""
        newest = last
        for event in self.answers.events:
            sequence = int(event["sequenceNumber"])
            if last is not None and sequence <= last:
                continue  # the API gives from N on; never write one twice
            component, ident = self._event_object(event)
            priority = str(event.get("priority") or "")
            critical = event.get("critical") is True or priority in CRITICAL_PRIORITIES
            tags = {
                schema.ARRAY: self.name,
                schema.COMPONENT: component,
                schema.ID: ident,
                schema.PRIORITY: "critical" if critical else "informational",
                schema.EVENT_TYPE: f"0x{int(event.get('eventType') or 0):04X}",
            }
            fields = {"sequence": sequence, "description": str(event.get("description") or "")}
            # Seconds from the array; the sequence in the milliseconds keeps two events of the
            # same second on the same object apart (same series, same time would overwrite).
            time_ms = int(event["timeStamp"]) * 1000 + sequence % 1000
            add_at(rnd, "array_event", tags, fields, time_ms)
            newest = sequence if newest is None else max(newest, sequence)
        return newest

    def _event_object(self, event: dict) -> tuple[str, str]:
        kind = str(event.get("componentType") or "")
        location = event.get("componentLocation") or {}
        if kind == "drive" and location.get("driveLoc"):
            tray, slot = int(location["driveLoc"]["tray"]), int(location["driveLoc"]["slot"])
            ident = self._by_tray_slot.get((tray, slot))
            if ident is None:  # no longer listed: the tray's drawer geometry tells
                per = self._slots_per_drawer.get(tray)
                ident = f"{tray},{(slot - 1) // per + 1},{(slot - 1) % per + 1}" if per else ""
            return "drive", ident
        if kind == "volumeGrp" and location.get("label"):
            return "volume_group", str(location["label"])
        if kind == "controller" and location.get("controllerLoc"):
            slot = int(location["controllerLoc"]["slot"])
            return "controller", CONTROLLER_NAMES[slot - 1] if 0 < slot <= 2 else str(slot)
        return "array", ""


def host_interface_names(controllers: list[dict]) -> dict[str, tuple[str, str]]:
    """interfaceRef -> (controller letter, "A-1") for every host port the inventory lists. Each
    entry of ``hostInterfaces`` keeps its details under its type's key ("sas", "fibre", "ib",
    "iscsi", ...)."""
    names = {}
    for controller in controllers:
        letter = controller_letter(controller)
        for port in controller.get("hostInterfaces") or []:
            details = port.get(str(port.get("interfaceType"))) or {}
            ref, channel = details.get("interfaceRef"), details.get("channel")
            if ref:
                names[str(ref)] = (letter, f"{letter}-{channel}" if channel is not None else ref)
    return names


def controller_letter(controller: dict) -> str:
    """A or B: the label when it is one, else slot 1 = A, 2 = B."""
    location = controller.get("physicalLocation") or {}
    label = str(location.get("label") or "").upper()
    if label in CONTROLLER_NAMES:
        return label
    slot = int(location.get("slot") or 0)
    return CONTROLLER_NAMES[slot - 1] if 0 < slot <= 2 else str(controller.get("controllerRef"))


def figures(item: dict, names: dict[str, str]) -> dict[str, float]:
    """The API's figures under Ostara's field names; missing or null ones are left out."""
    found = {}
    for source, field in names.items():
        value = item.get(source)
        if value is not None:
            found[field] = float(value)
    return found


def add_at(rnd: Round, measurement: str, tags: dict[str, str], fields: dict, time_ms: int):
    """A point at its own time (a MEL event's), not the round's."""
    encoded = line(series(measurement, {**rnd.tags, **tags}), fields, time_ms)
    if encoded is not None:
        rnd.lines.append(encoded)
