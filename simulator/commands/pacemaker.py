"""cibadmin, crm_mon, crm_resource, crm_attribute: the real Pacemaker tools on the pair's CIB.

The virtual server has no cluster daemons; its pair's cluster lives in `DIR/pairs/<pair>/
cib.xml`. These wrappers run the installed Pacemaker tool with `CIB_file` pointing there, so
arguments, output (including `--output-as=xml`) and exit codes are Pacemaker's own. When the
tool changed the CIB (`cibadmin --replace`, `crm_resource --move/--clear/--cleanup`, ...), the
rack asks Pacemaker's scheduler where everything goes now and makes it so (simulator.cluster).
`crm_mon` without `-1` is made one-shot: there is no terminal to refresh.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

from provisioning.ha import history
from simulator import cluster
from simulator.commands import Context


def run(ctx: Context, argv: list[str]) -> int:
    tool = ctx.name
    args = list(argv)
    if tool == "crm_mon" and not any(
        a in ("-1", "--one-shot") or a.startswith("--output-as") or a in ("-X", "--as-xml")
        for a in args
    ):
        args.insert(0, "-1")
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    with ctx.rack() as rack:
        pair = rack.state["servers"][ctx.host]["pair"]
        path = cluster.ensure_cib(rack, pair)
        before = path.read_bytes()
        if tool == "crm_resource" and ("--cleanup" in args or "-C" in args):
            # On a CIB file crm_resource --cleanup is only a dry run: do what the controller
            # does, then let the scheduler react as it would.
            returncode = cleanup(ctx, path, args)
        else:
            result = cluster.run_tool(tool, args, path, input=stdin)
            ctx.out.write(result.stdout)
            ctx.err.write(result.stderr)
            returncode = result.returncode
        if path.read_bytes() != before:
            keep_dc(before, path)
            rack.state["pairs"][pair]["cib"] = True
            cluster.reconcile(rack, pair)
            rack.render(rack.state["pairs"][pair]["servers"])
        return returncode


def keep_dc(before: bytes, path) -> None:
    """A cluster keeps its DC when its configuration is replaced (`cibadmin --replace` of a
    file without the DC's attributes): carry them over, as the DC writes them again."""
    try:
        old = ET.fromstring(before)
        tree = ET.parse(path)
    except ET.ParseError:
        return
    root = tree.getroot()
    kept = {key: old.get(key) for key in ("dc-uuid", "have-quorum") if old.get(key)}
    if kept and not all(root.get(key) for key in kept):
        for key, value in kept.items():
            root.set(key, value)
        tree.write(path, encoding="unicode")


def _option(args: list[str], short: str, long: str) -> str | None:
    for i, arg in enumerate(args):
        if arg in (short, long) and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(f"{long}="):
            return arg.split("=", 1)[1]
    return None


def cleanup(ctx: Context, path, args: list[str]) -> int:
    """crm_resource --cleanup [-r RESOURCE] [-N NODE]: erase the failures, as Pacemaker's
    controller does, and say so in its words."""
    resource = _option(args, "-r", "--resource")
    node = _option(args, "-N", "--node")
    root = ET.parse(path).getroot()
    resources = [resource] if resource else history.failed_resources(root)
    for name in resources:
        for cleaned in history.clean_up_file(path, name, node):
            ctx.out.write(f"Cleaned up {name} on {cleaned}\n")
    return 0
