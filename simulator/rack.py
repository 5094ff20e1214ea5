"""The virtual rack as one object: its state, its counters and its host trees, opened under
the rack lock by `serve`, by every virtual command and by the tests.

    with Rack.open(path, create=True) as rack:
        rack.add(plan)                  # servers and arrays of one SSU / MDS pair
        rack.set_scenario("balanced")
        rack.advance(by=10)             # the workload's I/O for 10 simulated seconds
        rack.render()                   # rewrite the /proc, /sys and debugfs trees

Changes are saved when the `with` block ends without an exception.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simulator import (
    cluster,
    counter_store,
    dispatch,
    kernel_log,
    procfs,
    quota,
    scenarios,
    topology,
    workload,
)
from simulator.command_table import MODULES
from simulator.santricity import mel
from simulator.state import (
    LOCK_FILE,
    RackError,
    load_state,
    new_state,
    rack_lock,
    save_state,
    write_atomic,
)

REPO_ROOT = Path(__file__).resolve().parent.parent

# Commands installed on every virtual server's PATH: the command modules' own table.
HOST_COMMANDS = MODULES
# Commands of the management server (rack-level bin/): out-of-band tools.
RACK_COMMANDS = {"ipmitool": "ipmitool", "SMcli": "smcli"}


class Rack:
    def __init__(self, root: Path, state: dict, writer: procfs.TreeWriter | None = None):
        self.root = root
        self.state = state
        self._store: dict | None = None
        self.writer = writer or procfs.TreeWriter()

    # -- opening and saving ---------------------------------------------------------------

    @classmethod
    @contextmanager
    def open(
        cls,
        root: Path | str,
        *,
        create: bool = False,
        writer: procfs.TreeWriter | None = None,
        store: dict | None = None,
        save_counters: bool = True,
        read_only: bool = False,
    ) -> Iterator[Rack]:
        """The rack, locked for one change and saved after it; ``read_only``: under a shared
        lock, never saved (what the reporting commands use)."""
        root = Path(root).resolve()
        if not create and not (root / "rack.json").exists():
            # A rack being added holds its lock until it has written rack.json, and a real-
            # cluster server its `add` powers on boots meanwhile: wait for it, then look again.
            if (root / LOCK_FILE).exists():
                with rack_lock(root, shared=True):
                    pass
            if not (root / "rack.json").exists():
                raise RackError(f"no virtual rack in {root} (create one with `add`)")
        with rack_lock(root, shared=read_only):
            state = load_state(root) or new_state(time.time())
            rack = cls(root, state, writer)
            rack._store = store
            rack._save_counters = save_counters
            yield rack
            if not read_only:
                rack.save()

    @property
    def store(self) -> dict:
        if self._store is None:
            self._store = counter_store.load_counters(self.root)
        return self._store

    def save(self) -> None:
        # The arrays log what changed in them (their MEL, served by the REST API).
        mel.observe(self.state, self.now)
        # ... and the servers' kernels what happened to them (their dev/kmsg); owners over a
        # soft limit start their grace.
        kernel_log.observe(self.state, self.now)
        quota.observe(self.state, self.now)
        save_state(self.root, self.state)
        if self._store is not None and getattr(self, "_save_counters", True):
            counter_store.save_counters(self.root, self._store)

    # -- clock and workload ---------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.state["clock"]

    def advance(self, *, by: float | None = None, to: float | None = None) -> None:
        target = to if to is not None else self.now + (by or 0.0)
        workload.advance(self.state, self.store, target)
        cluster.tick(self)

    def set_scenario(self, name: str, hot_server: str | None = None) -> None:
        scenarios.set_scenario(self.state, name, hot_server)

    # -- hardware -------------------------------------------------------------------------

    def add(self, plan: dict) -> dict:
        added = topology.add_plan(self.state, plan, self.now)
        self.install_commands()
        self.render(added["servers"])
        return added

    def server(self, host: str) -> dict:
        try:
            return self.state["servers"][host]
        except KeyError:
            raise RackError(f"unknown server {host}") from None

    def install_commands(self, *, direct: bool = False) -> None:
        """Write the command wrappers into every host's bin/ and the rack's own bin/;
        ``direct``: each call a new Python, never the dispatcher (the benchmark's "before")."""
        from simulator import realcluster  # imports the rack: only here

        real = set(realcluster.real_hosts(self.state))
        for host in self.state["servers"]:
            bin_dir = procfs.host_root(self.root, host) / "bin"
            for name, module in HOST_COMMANDS.items():
                _write_wrapper(
                    bin_dir / name, self.root, host, module, name, direct or host in real
                )
        for name, module in RACK_COMMANDS.items():
            _write_wrapper(self.root / "bin" / name, self.root, None, module, name, direct)
        for host in real:
            realcluster.shims.install(self.root, host)  # the real tools, over the imitation's

    # -- trees ----------------------------------------------------------------------------

    def use_memory_trees(self, directory: Path | str | None) -> None:
        """Keep the servers' proc/, sys/ and dev/ under `directory` (a memory filesystem such
        as /dev/shm), linked from each host root; None puts them back in the rack directory.
        Refreshing thousands of small files costs several times less CPU there."""
        self.state["trees"] = str(Path(directory).resolve()) if directory else None
        for host in self.state["servers"]:
            root = procfs.host_root(self.root, host)
            for name in procfs.TREE_DIRS:
                path = root / name
                if path.is_symlink():
                    path.unlink()
                elif path.is_dir():
                    shutil.rmtree(path)
        self.writer = procfs.TreeWriter()
        self.render()

    def render(self, hosts: list[str] | None = None) -> None:
        kernel_log.observe(self.state, self.now)
        for host in hosts if hosts is not None else list(self.state["servers"]):
            procfs.render_host(self.root, self.state, self.store, host, self.writer, self.now)
            hold_processes(self.root, host, self.state["servers"][host]["state"] != "up")

    # -- reporting ------------------------------------------------------------------------

    def status(self) -> dict:
        """What `python -m simulator status --json` prints."""
        state = self.state
        targets = {}
        for label, target in sorted(state["targets"].items()):
            targets[label] = {
                "kind": target["kind"],
                "fsname": target["fsname"],
                "mounted_on": target.get("mounted_on"),
                "primary": target.get("primary"),
                "health": topology.target_health(state, target),
                "fill": round(target["used_kib"] / target["total_kib"], 4)
                if target["total_kib"]
                else 0.0,
            }
        arrays = {}
        for name, array in sorted(state["arrays"].items()):
            arrays[name] = {
                "controllers": dict(array["controllers"]),
                "volume_groups": {
                    vg: topology.volume_group_health(array, group)
                    for vg, group in sorted(array["volume_groups"].items())
                },
                "failed_drives": sorted(
                    f"{e['tray']},{key}"
                    for e in array["enclosures"]
                    for key, drive in e["drives"].items()
                    if drive["state"] == "failed"
                ),
                "drawers_offline": {
                    e["id"]: list(e["drawers_offline"])
                    for e in array["enclosures"]
                    if e["drawers_offline"]
                },
            }
        servers = {}
        for host, server in sorted(state["servers"].items()):
            servers[host] = {
                key: server[key]
                for key in (
                    "role",
                    "pair",
                    "power",
                    "state",
                    "cluster",
                    "lnet_link_up",
                    "bmc_up",
                    "pdu_up",
                    "heartbeat_up",
                    "pacemaker",
                    "sas",
                )
            }
            servers[host]["targets"] = sorted(server["mounts"])
            servers[host]["lustre_healthy"] = procfs.host_healthy(state, host)
        return {
            "rack": str(self.root),
            "clock": self.now,
            "scenario": state["scenario"],
            "servers": servers,
            "pairs": {
                name: {
                    "servers": pair["servers"],
                    "arrays": pair["arrays"],
                    "private_switch_up": pair["private_switch_up"],
                    "cib": pair["cib"],
                }
                for name, pair in sorted(state["pairs"].items())
            },
            "arrays": arrays,
            "targets": targets,
            "jobs": len(state["jobs"]),
            "failures": state["failures"],
            "fence_history": state["fence_history"][-20:],
        }


def hold_processes(root: Path, host: str, down: bool) -> None:
    """A down server runs nothing: the processes a playbook started on a virtual host (the
    sensor; their pids in the host's `run/*.pid`) are stopped (SIGSTOP) while it is down and
    continued (SIGCONT) when it is up, as a real host's services die and restart with it."""
    host_root = procfs.host_root(root, host)
    run = host_root / "run"
    if not run.is_dir():
        return
    for pid_file in run.glob("*.pid"):
        try:
            pid = int(pid_file.read_text().split()[0])
            # A stale pid file may name someone else's process now: only one started with
            # this host's files (its configuration) is held.
            if str(host_root).encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            os.kill(pid, signal.SIGSTOP if down else signal.SIGCONT)
        except (OSError, ValueError, IndexError):
            continue  # gone: nothing to hold


def _write_wrapper(
    path: Path, root: Path, host: str | None, module: str, name: str, direct: bool = False
) -> None:
    """The command's wrapper: handed to the rack's resident dispatcher (simulator/dispatch.py),
    or ``direct``ly a new Python per call (a real-cluster server's, whose commands also run
    inside its namespaces)."""
    if not direct:
        text = dispatch.wrapper_text(root, host, name, module)
    else:
        env = [f"OSTARA_RACK={shlex.quote(str(root))}"]
        if host:
            env.append(f"OSTARA_HOST={shlex.quote(host)}")
        text = (
            "#!/bin/sh\n"
            f"# Virtual rack command `{name}` (simulator.commands.{module}).\n"
            f"export {' '.join(env)}\n"
            f'export PYTHONPATH={shlex.quote(str(REPO_ROOT))}"${{PYTHONPATH:+:$PYTHONPATH}}"\n'
            f'exec {shlex.quote(sys.executable)} -m simulator.commands {shlex.quote(name)} "$@"\n'
        )
    if path.exists() and path.read_text() == text:
        return
    write_atomic(path, text)
    os.chmod(path, 0o755)
