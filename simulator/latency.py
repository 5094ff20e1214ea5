"""How long the virtual rack's commands take, as real ones do: wall time, not CPU.

A real `SMcli` is a Java program that starts and talks to the controllers' management port
(seconds); `ipmitool` asks a BMC over the network (a full `sensor` list about a second, `chassis
power status` a few tenths). The rack keeps a delay per command in `DIR/latency.json`
(`python -m simulator serve --latency ...`); each virtual command sleeps that long before it
answers, so sensor timeouts and round lengths are tested as on real servers. A new rack has
none (0 s): the tests and the demo stay fast unless they ask for it.

A setting is `NAME=SECONDS` (every `NAME` call) or `NAME:WORD=SECONDS` (a `NAME` call with
`WORD` among its arguments, e.g. `ipmitool:chassis=0.3`; it wins over the plain `NAME`),
comma-separated; `real` is the preset of real hardware's delays and `none` clears them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from simulator.state import RackError, write_atomic

FILE = "latency.json"

# Near real hardware (seconds): SMcli starts a JVM and opens a management session; a BMC
# answers a full sensor list in about a second, a power status in a few tenths.
REAL = {"SMcli": 2.5, "ipmitool": 1.0, "ipmitool:chassis": 0.3, "fence_apc_snmp": 0.3}
PRESETS = {"real": REAL, "none": {}}


def parse(text: str) -> dict[str, float]:
    """`SMcli=2.5,ipmitool=1,ipmitool:chassis=0.3`, `real` or `none` -> {key: seconds}."""
    text = text.strip()
    if text in PRESETS:
        return dict(PRESETS[text])
    delays: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RackError(f"latency {item!r}: write NAME=SECONDS (e.g. SMcli=2.5)")
        if key.strip() in PRESETS:
            delays.update(PRESETS[key.strip()])
            continue
        try:
            seconds = float(value)
        except ValueError:
            raise RackError(f"latency {item!r}: {value!r} is not a number of seconds") from None
        if not 0 <= seconds <= 600:
            raise RackError(f"latency {item!r}: seconds must be between 0 and 600")
        delays[key.strip()] = seconds
    return delays


def save(root: Path | str, delays: dict[str, float]) -> None:
    path = Path(root) / FILE
    if delays:
        write_atomic(path, json.dumps(delays, sort_keys=True) + "\n")
    else:
        path.unlink(missing_ok=True)


def load(root: Path | str) -> dict[str, float]:
    try:
        return json.loads((Path(root) / FILE).read_text())
    except (OSError, ValueError):
        return {}


def delay_for(delays: dict[str, float], name: str, argv: list[str]) -> float:
    words = set(argv)
    for key, seconds in delays.items():
        command, _, word = key.partition(":")
        if command == name and word and word in words:
            return float(seconds)
    return float(delays.get(name, 0.0))


def wait(root: Path | str, name: str, argv: list[str]) -> None:
    """Take as long as the real command would (sleeping: no CPU)."""
    seconds = delay_for(load(root), name, argv)
    if seconds > 0:
        time.sleep(seconds)
