"""Where the virtual rack keeps its state on disk, and how processes share it.

A rack is a directory. `rack.json` holds everything that commands and failures change (servers,
arrays, volumes, targets, cluster placement, injected failures, the workload's jobs);
`counters.pickle` holds the kernel-style counters that only the clock advances; `hosts/<name>/`
is each server's root as its sensors and commands see it; `pairs/<pair>/cib.xml` is the cluster
configuration pushed to each server pair. `serve`, every virtual command and the tests take one
exclusive lock (`rack.lock`) for each change, so they all see one state; files are replaced
atomically so a reader never sees half a file.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STATE_FILE = "rack.json"
LOCK_FILE = "rack.lock"
STATE_VERSION = 1


class RackError(Exception):
    """A request the rack cannot satisfy (unknown host, no rack in the directory, ...)."""


def demo_rack_dir() -> Path:
    """The rack the demo serves (deploy/demo.sh): `$OSTARA_VIRTUAL_RACK`, else
    `$OSTARA_RUN_DIR/rack`, else `.run/demo/rack` in the repository, so the README's commands
    work without `--rack`."""
    if rack := os.environ.get("OSTARA_VIRTUAL_RACK"):
        return Path(rack)
    run_dir = os.environ.get("OSTARA_RUN_DIR")
    base = Path(run_dir) if run_dir else Path(__file__).resolve().parent.parent / ".run" / "demo"
    return base / "rack"


def write_atomic(path: Path | str, data: str | bytes) -> None:
    """Write a whole file so that readers see the old or the new content, never a mix."""
    path = str(path)
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    payload = data.encode() if isinstance(data, str) else data
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, path)


@contextmanager
def rack_lock(root: Path, *, shared: bool = False) -> Iterator[None]:
    """Exclusive lock over the whole rack for one read-modify-write; shared for a read (the
    sensors' commands that only report), so readers do not queue behind one another."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK_FILE, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def new_state(now: float) -> dict:
    return {
        "version": STATE_VERSION,
        "created": now,
        "clock": now,
        "seed": 20240101,
        "scenario": "idle",
        "hot_server": None,
        "servers": {},
        "pairs": {},
        "arrays": {},
        "targets": {},
        "clients": [],
        "jobs": {},
        "next_job": 40001,
        "failures": {},
        "next_failure": 1,
        "fence_history": [],
        "stats_cleared": {},
    }


def load_state(root: Path) -> dict | None:
    path = root / STATE_FILE
    if not path.exists():
        return None
    with open(path) as handle:
        return json.load(handle)


def save_state(root: Path, state: dict) -> None:
    write_atomic(root / STATE_FILE, json.dumps(state, separators=(",", ":"), sort_keys=True))
