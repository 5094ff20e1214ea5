"""The arrays of the virtual rack as the sensors' array source sees them, read from a rack state
read once: `python -m benchmarks.health` collects every server of a 100-SSU rack, where each
virtual `SMcli` call would read the whole rack again.
"""

from __future__ import annotations

from pathlib import Path

from sensors.arrays import ArrayComponent
from simulator.rack import Rack


class RackArraySource:
    """The arrays of one server pair as the array tool reports them: every drive (id
    `tray,drawer,slot`), every volume group with its state, both controllers."""

    def __init__(self, root: Path, arrays: list[str], state: dict | None = None) -> None:
        self.root = root
        self.arrays = arrays
        self.state = state  # a rack state read once (the benchmark), else read at each round

    def components(self) -> list[ArrayComponent]:
        if self.state is not None:
            return self._components(self.state)
        with Rack.open(self.root, save_counters=False) as rack:
            return self._components(rack.state)

    def _components(self, state: dict) -> list[ArrayComponent]:
        from simulator.topology import volume_group_health

        found = []
        for name in self.arrays:
            array = state["arrays"][name]
            for enclosure in array["enclosures"]:
                for key, drive in sorted(enclosure["drives"].items()):
                    drawer = int(key.split(",")[0])
                    word = drive["state"]
                    if word != "failed" and drawer in enclosure["drawers_offline"]:
                        word = "missing"
                    ok = word not in ("failed", "missing")
                    found.append(
                        ArrayComponent(name, "drive", f"{enclosure['tray']},{key}", word, ok)
                    )
            for group_name, group in sorted(array["volume_groups"].items()):
                health = volume_group_health(array, group)["state"]
                found.append(
                    ArrayComponent(name, "volume_group", group_name, health, health == "optimal")
                )
            for controller, word in sorted(array["controllers"].items()):
                found.append(
                    ArrayComponent(name, "controller", controller, word, word == "optimal")
                )
        return found
