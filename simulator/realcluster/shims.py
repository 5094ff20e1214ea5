"""What a real-cluster virtual server has on its PATH (`hosts/<host>/bin/`), from outside.

Pacemaker's and Corosync's tools are wrappers that enter the server's namespaces and run the
real tool there (`nsenter -t <its PID 1>`), with the real arguments, output and exit codes; a
powered-off server fails them as ssh would (exit 255). `systemctl` is the narrow shim the
namespaces need (they have no systemd): `enable`/`disable`/`is-enabled` keep the unit symlinks
under the server's `etc/systemd/system/multi-user.target.wants/` exactly where systemd keeps
them (`init` starts what is enabled at power on), and `start`/`stop`/`restart`/`is-active` start
and stop `corosync` and `pacemakerd` inside the server, in the units' order.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from simulator.rack import REPO_ROOT
from simulator.state import write_atomic

from . import node

TOOLS = (
    "cibadmin", "crm_mon", "crm_resource", "crm_attribute", "crm_node", "crm_verify",
    "crm_simulate", "crm_failcount", "attrd_updater", "stonith_admin", "corosync-cfgtool",
    "corosync-quorumtool", "corosync-cmapctl",
)  # fmt: skip
DOWN = "ssh: connect to host {host} port 22: No route to host"


def _tool_path(name: str) -> str:
    for directory in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        if os.access(f"{directory}/{name}", os.X_OK):
            return f"{directory}/{name}"
    return f"/usr/sbin/{name}"


def _write(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    write_atomic(path, text)
    os.chmod(path, 0o755)


def install(rack_root: Path, host: str) -> None:
    root = node.host_dir(rack_root, host)
    pid_file = shlex.quote(str(root / node.CLUSTER_DIR / "init.pid"))
    for name in TOOLS:
        _write(
            root / "bin" / name,
            "#!/bin/sh\n"
            f"# `{name}` of {host}'s real cluster: run inside the server (simulator/realcluster).\n"
            # Inside the server already (an agent Pacemaker runs): the tool itself.
            "if grep -q simulator.realcluster /proc/1/cmdline 2>/dev/null; then\n"
            f'    exec {_tool_path(name)} "$@"\n'
            "fi\n"
            f"pid=$(cat {pid_file} 2>/dev/null)\n"
            'if [ -z "$pid" ] || ! grep -q simulator.realcluster /proc/"$pid"/cmdline 2>/dev/null; '
            "then\n"
            f"    echo {shlex.quote(DOWN.format(host=host))} >&2; exit 255\n"
            "fi\n"
            f'exec nsenter -t "$pid" -n -m -u -i -p -- {_tool_path(name)} "$@"\n',
        )
    _write(
        root / "bin" / "systemctl",
        "#!/bin/sh\n"
        f"# systemctl of {host}: the shim for its namespaces (simulator/realcluster/shims.py).\n"
        f"export PYTHONPATH={shlex.quote(str(REPO_ROOT))}\n"
        f"exec {shlex.quote(sys.executable)} -m simulator.realcluster systemctl "
        f'--rack {shlex.quote(str(Path(rack_root).resolve()))} --host {shlex.quote(host)} "$@"\n',
    )


def _unit(name: str) -> str:
    return name if "." in name else f"{name}.service"


def systemctl(rack_root: Path, host: str, argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("-")]
    words = [a for a in argv if not a.startswith("-")]
    quiet = "-q" in flags or "--quiet" in flags
    if not words:
        print("systemctl: the virtual server's shim needs a verb", file=sys.stderr)
        return 1
    verb, units = words[0], [_unit(u) for u in words[1:]]
    for unit in units:
        if unit not in node.UNITS:
            print(f"Failed to {verb} {unit}: Unit {unit} not found.", file=sys.stderr)
            return 5 if verb in ("start", "stop", "restart") else 1
    root = node.host_dir(rack_root, host)
    wants = root / node.WANTS
    if verb in ("enable", "disable"):
        for unit in units:
            link = wants / unit
            shown = f"/{node.WANTS}/{unit}"
            if verb == "enable" and not link.is_symlink():
                wants.mkdir(parents=True, exist_ok=True)
                link.symlink_to(f"/lib/systemd/system/{unit}")
                print(f"Created symlink {shown} → /lib/systemd/system/{unit}.", file=sys.stderr)
            elif verb == "disable" and link.is_symlink():
                link.unlink()
                print(f"Removed {shown}.", file=sys.stderr)
        if "--now" in flags:
            return _inside(rack_root, host, "start" if verb == "enable" else "stop", units)
        return 0
    if verb == "is-enabled":
        states = ["enabled" if (wants / u).is_symlink() else "disabled" for u in units]
        if not quiet:
            print("\n".join(states))
        return 0 if all(s == "enabled" for s in states) else 1
    if verb in ("start", "stop", "restart", "is-active"):
        return _inside(rack_root, host, verb, units, quiet=quiet)
    print(f"systemctl: the virtual server's shim does not do {verb!r}", file=sys.stderr)
    return 1


def _inside(rack_root: Path, host: str, verb: str, units: list[str], quiet: bool = False) -> int:
    pid = node.init_pid(rack_root, host)
    if pid is None:
        print(DOWN.format(host=host), file=sys.stderr)
        return 255
    command = ["nsenter", "-t", str(pid), "-n", "-m", "-u", "-i", "-p", "--",
               *node.python_command("unit", verb, *units)]  # fmt: skip
    done = subprocess.run(command, env=node.python_env(), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    if done.stdout and not quiet:
        sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


def unit(verb: str, units: list[str]) -> int:
    """Inside the server: start, stop, restart or ask about units."""
    if verb == "is-active":
        states = ["active" if node.unit_active(u) else "inactive" for u in units]
        print("\n".join(states))
        return 0 if all(s == "active" for s in states) else 3
    if verb not in ("start", "stop", "restart"):
        print(f"unit: no verb {verb!r} (start, stop, restart, is-active)", file=sys.stderr)
        return 2
    for name in units:
        again = [name]
        if (
            verb == "restart"
            and name in node.REQUIRED_BY
            and node.unit_active(node.REQUIRED_BY[name])
        ):
            again.append(node.REQUIRED_BY[name])  # stopped with it, so started again too
        if verb in ("stop", "restart"):
            node.stop_unit(name)
        if verb in ("start", "restart"):
            for started in again:
                if not node.start_unit(started):
                    print(node.FAILED.format(unit=started), file=sys.stderr)
                    return 1
    return 0
