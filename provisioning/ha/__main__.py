"""Command line: a pair's Pacemaker configuration from its plan, and what-if checks.

    python -m provisioning.ha PLAN.json --cib OUT.xml
    python -m provisioning.ha PLAN.json --pcs > configure-pair.sh
    python -m provisioning.ha PLAN.json --what-if node-lost:oss01 --what-if lnet-down:oss02
    python -m provisioning.ha PLAN.json --what-if move:scratch-OST0000@oss02
    python -m provisioning.ha PLAN.json --live-cib cib.xml --what-if standby:oss01

An operator's act (move:TARGET@NODE, ban:TARGET@NODE, clear:TARGET, cleanup:TARGET,
standby:NODE, unstandby:NODE) is run as crm_resource/crm_attribute would run it, then the
scheduler reacts.
``--live-cib`` starts from a running pair's CIB (``cibadmin --query > cib.xml``) instead of both
servers up with the plan's configuration.

A plan that cannot become a safe configuration, or a what-if that names no node or target of
the pair, exits with status 2 and a message naming the field.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from provisioning.ha.cib import build_cib
from provisioning.ha.cluster import FenceCredentials
from provisioning.ha.operator import parse_action, what_if
from provisioning.ha.pcs import build_pcs_script
from provisioning.ha.plan import HAConfigError, read_plan
from provisioning.ha.simulate import (
    SimulationError,
    SimulationResult,
    WhatIfError,
    simulate,
    verify,
)
from provisioning.ha.what_if_text import parse_what_if

EXIT_BAD_INPUT = 2
EXIT_TOOL_FAILED = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m provisioning.ha",
        description="Pacemaker configuration of a Lustre MDS or OSS pair, from its plan.",
    )
    parser.add_argument("plan", type=Path, help="the pair's plan (JSON)")
    parser.add_argument(
        "--cib", metavar="OUT.xml", help="write the CIB XML to this file ('-' for standard output)"
    )
    parser.add_argument("--pcs", action="store_true", help="print the equivalent pcs script")
    parser.add_argument(
        "--what-if",
        action="append",
        default=[],
        metavar="FAILURE",
        help="node-lost:NODE, node-returns:NODE, lnet-down:NODE, lnet-up:NODE, "
        "lustre-down:NODE, lustre-up:NODE, monitor-fails:TARGET[@NODE], or an operator's "
        "move:TARGET@NODE, ban:TARGET@NODE, clear:TARGET, cleanup:TARGET, standby:NODE, "
        "unstandby:NODE; "
        "repeat to apply one after the other",
    )
    parser.add_argument(
        "--live-cib",
        type=Path,
        metavar="CIB.xml",
        help="start from this running pair's CIB (cibadmin --query), for operator acts only",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="with --what-if, also print crm_simulate's own account",
    )
    parser.add_argument(
        "--ipmi-user",
        default=FenceCredentials.ipmi_username,
        help="BMC user the IPMI fence device logs in as",
    )
    parser.add_argument(
        "--pdu-user",
        default=FenceCredentials.pdu_username,
        help="SNMPv3 user the PDU fence device uses",
    )
    return parser


def _load_plan(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise HAConfigError(str(path), f"cannot read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise HAConfigError(str(path), f"not JSON: {error}") from error


def _target_lines(
    primaries: dict[str, str | None],
    placements: dict[str, str | None],
    before: dict[str, str | None] | None = None,
) -> list[str]:
    """One line per target: where it runs, whether that is home, and (`before`) where it ran."""
    width = max(map(len, primaries), default=0)
    lines = []
    for label, primary in primaries.items():
        where = placements.get(label)
        if where is None:
            note = "NOT RUNNING"
        elif where == primary:
            note = "on its primary"
        else:
            note = "on its failover server"
        if before is not None and before.get(label) != where:
            note += f" (was {before.get(label) or 'not running'})"
        lines.append(f"{label:<{width}}  {where or '-':<10}  {note}")
    return lines


def _report(plan: dict[str, Any], what_ifs: Sequence[str], result: SimulationResult) -> str:
    primaries = {target.label: target.primary for target in read_plan(plan).targets}
    lines = [
        f"what-if: {' then '.join(what_ifs) if what_ifs else 'both servers up'}",
        f"fenced:  {', '.join(result.fenced) if result.fenced else 'nothing'}",
        f"online:  {', '.join(result.online_nodes) if result.online_nodes else 'no server'}",
        "",
        *_target_lines(primaries, result.placements),
    ]
    return "\n".join(lines) + "\n"


def _simulated(run: Callable[[], Any]) -> tuple[Any, int]:
    """Run a what-if: its result, or its error printed and the exit status it gives."""
    try:
        return run(), 0
    except WhatIfError as error:
        print(f"error: {error}", file=sys.stderr)
        return None, EXIT_BAD_INPUT
    except SimulationError as error:
        print(f"error: {error}", file=sys.stderr)
        return None, EXIT_TOOL_FAILED


def _operator_acts(what_ifs: Sequence[str]) -> list:
    actions = [parse_action(text) for text in what_ifs]
    if not actions or None in actions:
        raise WhatIfError("--live-cib takes operator acts only (move, ban, clear, standby)")
    return actions


def _live(plan: dict[str, Any], arguments: argparse.Namespace) -> int:
    """Operator acts on a running pair's CIB: which targets move where."""
    try:
        live = arguments.live_cib.read_text()
    except OSError as error:
        print(f"error: {arguments.live_cib}: cannot read: {error.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    result, status = _simulated(lambda: what_if(live, _operator_acts(arguments.what_if)))
    if result is None:
        return status
    planned = {target.label: target.primary for target in read_plan(plan).targets}
    primaries = {label: planned.get(label) for label in sorted(result.after)}
    print(f"what-if: {' then '.join(arguments.what_if)} (from the live cluster)")
    print("\n".join(_target_lines(primaries, result.after, result.before)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    credentials = FenceCredentials(
        ipmi_username=arguments.ipmi_user, pdu_username=arguments.pdu_user
    )
    try:
        plan = _load_plan(arguments.plan)
        cib_xml = build_cib(plan, credentials)
        failures = [parse_action(text) or parse_what_if(text) for text in arguments.what_if]
    except (HAConfigError, SimulationError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if arguments.live_cib:
        return _live(plan, arguments)

    if arguments.cib:
        if arguments.cib == "-":
            sys.stdout.write(cib_xml)
        else:
            Path(arguments.cib).write_text(cib_xml)
    if arguments.pcs:
        sys.stdout.write(build_pcs_script(plan, credentials))
    if arguments.what_if or not (arguments.cib or arguments.pcs):
        result, status = _simulated(lambda: simulate(cib_xml, failures))
        if result is None:
            return status
        if not arguments.what_if:
            check = verify(result.cib_xml)
            print(f"crm_verify (both servers up): {'OK' if check.ok else check.output}")
        sys.stdout.write(_report(plan, arguments.what_if, result))
        if arguments.summary:
            sys.stdout.write("\n" + result.summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
