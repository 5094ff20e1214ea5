"""`python -m simulator.realcluster VERB`: the processes of a real-cluster rack.

boot --rack R --host H        the BMC's start command (power on); runs until power off
init --rack R --host H        PID 1 inside the server (started by boot)
unit VERB UNIT...             inside the server: start/stop/restart/is-active a service
systemctl --rack R --host H   the server's systemctl shim (its bin/systemctl)
pdu --rack R --from-host H    the virtual fence_apc_snmp
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import node, pdu, shims


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    verb, rest = argv[0], argv[1:]
    if verb == "unit":
        if not rest:
            print(__doc__, file=sys.stderr)
            return 2
        return shims.unit(rest[0], rest[1:])
    parser = argparse.ArgumentParser(prog=f"python -m simulator.realcluster {verb}")
    parser.add_argument("--rack", required=True, type=Path)
    parser.add_argument("--host")
    parser.add_argument("--from-host")
    known, extra = parser.parse_known_args(rest)
    if verb == "boot":
        return node.boot(known.rack, known.host)
    if verb == "init":
        return node.init(known.rack, known.host)
    if verb == "systemctl":
        return shims.systemctl(known.rack, known.host, extra)
    if verb == "pdu":
        return pdu.run(known.rack, known.from_host, extra)
    print(__doc__, file=sys.stderr)
    return 2


sys.exit(main())
