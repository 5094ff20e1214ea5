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
        result = cluster.run_tool(tool, args, path, input=stdin)
        ctx.out.write(result.stdout)
        ctx.err.write(result.stderr)
        if path.read_bytes() != before:
            rack.state["pairs"][pair]["cib"] = True
            cluster.reconcile(rack, pair)
            rack.render(rack.state["pairs"][pair]["servers"])
        return result.returncode
