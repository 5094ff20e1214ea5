"""Catalogue of the enclosure models the planner knows.

One entry per model: adding a model is adding one `EnclosureModel` to `MODELS`. An entry
describes the hardware as the vendor ships it (drawers, slots, controllers); the enclosures in a
customer's rack are instances planned from these entries.
"""

from __future__ import annotations

from dataclasses import dataclass

CONTROLLER = "controller"
EXPANSION = "expansion"


@dataclass(frozen=True)
class EnclosureModel:
    """One enclosure model as sold: its drive layout and whether it carries RAID controllers."""

    name: str
    kind: str  # CONTROLLER or EXPANSION
    # Expansions attach only to controllers of the same family (SAS cabling and firmware).
    family: str
    drawers: int
    slots_per_drawer: int
    controllers: tuple[str, ...]
    # Hot spares the vendor's reference layout declares for one full enclosure: the drives
    # that no 8+2 group can take (84 = 8 x 10 + 4).
    default_global_spares: int = 0
    # Most drives one controller enclosure can run with its expansions (vendor maximum).
    max_drives: int | None = None
    description: str = ""

    @property
    def drives(self) -> int:
        return self.drawers * self.slots_per_drawer

    @property
    def is_controller(self) -> bool:
        return self.kind == CONTROLLER


DUPLEX = ("A", "B")

MODELS: dict[str, EnclosureModel] = {
    model.name: model
    for model in (
        EnclosureModel(
            name="E5560",
            kind=CONTROLLER,
            family="E-Series",
            drawers=5,
            slots_per_drawer=12,
            controllers=DUPLEX,
            max_drives=384,
            description="60-drive controller enclosure, 5 drawers of 12, duplex controllers",
        ),
        EnclosureModel(
            name="DE6600",
            kind=EXPANSION,
            family="E-Series",
            drawers=5,
            slots_per_drawer=12,
            controllers=(),
            description="60-drive expansion enclosure, 5 drawers of 12",
        ),
        # E2724 has no drawers: its 24 drives are treated as one drawer numbered 1.
        EnclosureModel(
            name="E2724",
            kind=CONTROLLER,
            family="E-Series",
            drawers=1,
            slots_per_drawer=24,
            controllers=DUPLEX,
            max_drives=192,
            description="24-drive controller enclosure (MDT array), duplex controllers",
        ),
        EnclosureModel(
            name="MD3460",
            kind=CONTROLLER,
            family="PowerVault MD3",
            drawers=5,
            slots_per_drawer=12,
            controllers=DUPLEX,
            max_drives=180,
            description="60-drive controller enclosure, 5 drawers of 12, duplex controllers",
        ),
        EnclosureModel(
            name="MD3060e",
            kind=EXPANSION,
            family="PowerVault MD3",
            drawers=5,
            slots_per_drawer=12,
            controllers=(),
            description="60-drive expansion enclosure, 5 drawers of 12",
        ),
        EnclosureModel(
            name="ME4084",
            kind=CONTROLLER,
            family="PowerVault ME4",
            drawers=2,
            slots_per_drawer=42,
            controllers=DUPLEX,
            max_drives=336,
            default_global_spares=4,
            description="84-drive controller enclosure, 2 drawers of 42, duplex controllers",
        ),
        EnclosureModel(
            name="ME484",
            kind=EXPANSION,
            family="PowerVault ME4",
            drawers=2,
            slots_per_drawer=42,
            controllers=(),
            default_global_spares=4,
            description="84-drive expansion enclosure, 2 drawers of 42",
        ),
    )
}


@dataclass(frozen=True)
class RaidScheme:
    """A volume group layout: how many drives a group takes and how many of them hold data."""

    name: str
    level: int
    drives: int
    data_drives: int


RAID_SCHEMES: dict[str, RaidScheme] = {
    "8+2": RaidScheme(name="8+2", level=6, drives=10, data_drives=8),
    # RAID-10 of 12 mirrored pairs: the vendor's MDT layout on a 24-drive enclosure.
    "10": RaidScheme(name="10", level=10, drives=24, data_drives=12),
}

OSS, MDS = "oss", "mds"
ROLES = (OSS, MDS)
DEFAULT_RAID = {OSS: "8+2", MDS: "10"}
# OSTs want RAID-6 streaming capacity; MDTs want RAID-10 small random I/O.
RAID_FOR_ROLE = {OSS: ("8+2",), MDS: ("10",)}

# Segment sizes offered by both E-Series/MD3 (8 to 512 KiB) and ME4 (chunk sizes up to 512 KiB),
# limited to those whose 8+2 full stripe is at least Lustre's 1 MiB bulk RPC: 128 KiB x 8 data
# drives = 1 MiB (the vendor default), 512 KiB x 8 = 4 MiB (large sequential I/O).
SEGMENT_SIZES_KIB = (128, 256, 512)
DEFAULT_SEGMENT_KIB = 128
