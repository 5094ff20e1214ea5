"""The virtual servers' commands, with the real tools' names, arguments, output and exit codes.

Each virtual host has `DIR/hosts/<host>/bin/<command>`, a small shell wrapper that sets
`OSTARA_RACK` (the rack directory) and `OSTARA_HOST` (the server it runs on) and hands the
command to the rack's resident dispatcher (simulator/dispatch.py: no new interpreter per call),
or runs `python -m simulator.commands <command> ARGS...` when none is running. The management
server's out-of-band tools (`ipmitool`, `SMcli`) are in `DIR/bin/` with no `OSTARA_HOST`. Put a
host's bin/ first on PATH
(ansible's `environment:`, or `PATH=DIR/hosts/oss01/bin:$PATH`) and the playbooks run unchanged.

| command | module |
| --- | --- |
| mkfs.lustre, tunefs.lustre | `mkfs_lustre`, `tunefs_lustre` |
| mount (-t lustre), mount.lustre, umount | `mount`, `umount` |
| lctl (get_param, set_param, dl, list_nids, ping) | `lctl` |
| lnetctl (lnet, net show/add/del, stats show, global show, ping) | `lnetctl` |
| lfs (setquota, quota) | `lfs` |
| obdfilter-survey | `obdfilter_survey` |
| ipmitool (sdr, sensor, chassis power/status) | `ipmitool` |
| fence_apc_snmp (--action=status, monitor: the PDU outlet) | `fence_apc_snmp` |
| cibadmin, crm_mon, crm_resource, crm_attribute | `pacemaker` (the real tools on the pair's CIB) |
| SMcli (E-series script commands, a subset) | `smcli` |
| multipath (-ll, -l) | `multipath` |
| corosync-cfgtool (-s) | `corosync_cfgtool` |

A command run on a server that is down fails as ssh would (exit 255). A command takes the wall
time the rack's latency setting gives it (simulator/latency.py; none by default).
"""

from __future__ import annotations

import errno as errno_codes
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simulator import latency
from simulator.command_table import MODULES
from simulator.rack import Rack
from simulator.state import RackError


class CommandExit(Exception):
    """Stop the command with this exit code (after printing)."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class Context:
    """Where a command runs: the rack directory and the virtual server (None: management)."""

    def __init__(self, name: str, rack: str | None = None, host: str | None = None):
        self.name = name
        rack = rack or os.environ.get("OSTARA_RACK")
        if not rack:
            raise RackError("OSTARA_RACK is not set: run the commands from a host's bin/")
        self.rack_root = Path(rack)
        self.host = host if host is not None else (os.environ.get("OSTARA_HOST") or None)
        self.out = sys.stdout
        self.err = sys.stderr

    def print(self, text: str = "", end: str = "\n") -> None:
        self.out.write(text + end)

    def error(self, text: str, end: str = "\n") -> None:
        self.err.write(text + end)

    @contextmanager
    def rack(self, *, check_host: bool = True, read_only: bool = False) -> Iterator:
        """The rack, locked; the command's own server must be up (else ssh's failure).
        ``read_only`` for a command that only reports: a shared lock, nothing saved."""
        with Rack.open(self.rack_root, save_counters=False, read_only=read_only) as rack:
            if check_host and self.host:
                server = rack.state["servers"].get(self.host)
                if server is None:
                    self.error(
                        f"ssh: Could not resolve hostname {self.host}: Name or service not known"
                    )
                    raise CommandExit(255)
                if server["state"] != "up":
                    self.error(f"ssh: connect to host {self.host} port 22: No route to host")
                    raise CommandExit(255)
            yield rack


def strerror(code: int) -> str:
    return os.strerror(code) if code else "Success"


def run(name: str, argv: list[str], context: Context | None = None) -> int:
    module = importlib.import_module(f"simulator.commands.{MODULES[name]}")
    context = context or Context(name)
    latency.wait(context.rack_root, name, argv)  # as long as the real one takes
    try:
        return int(module.run(context, argv) or 0)
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as the C tools do on SIGPIPE.
        sys.stdout = None
        return 141
    except CommandExit as stop:
        return stop.code
    except RackError as problem:
        context.error(f"{name}: {problem}")
        return getattr(problem, "errno", errno_codes.EINVAL) or 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in MODULES:
        sys.stderr.write(f"usage: python -m simulator.commands {{{','.join(MODULES)}}} ...\n")
        return 2
    return run(argv[0], argv[1:])
