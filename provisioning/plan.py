"""Plan an SSU or MDS pair from a spec file: `python -m provisioning.plan SPEC.json [--table]`.

Prints the plan as JSON (or, with --table, for a person). A spec that cannot be planned exits
with status 2 and one `field: message` line per problem on stderr. `-` reads the spec from stdin.
"""

from __future__ import annotations

import argparse
import json
import sys

from provisioning.planner import SpecError, make_plan
from provisioning.planner.report import render_table

BAD_SPEC = 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m provisioning.plan",
        description="Plan the volume groups, targets and failover map of an SSU or MDS pair.",
    )
    parser.add_argument("spec", help="spec JSON file, or - for stdin")
    parser.add_argument("--table", action="store_true", help="print for a person, not as JSON")
    args = parser.parse_args(argv)

    try:
        if args.spec == "-":
            spec = json.load(sys.stdin)
        else:
            with open(args.spec, encoding="utf-8") as spec_file:
                spec = json.load(spec_file)
    except OSError as problem:
        print(f"spec: cannot read {args.spec}: {problem.strerror}", file=sys.stderr)
        return BAD_SPEC
    except UnicodeDecodeError as problem:
        print(f"spec: not UTF-8 text: {problem.reason} at byte {problem.start}", file=sys.stderr)
        return BAD_SPEC
    except json.JSONDecodeError as problem:
        print(f"spec: not valid JSON: {problem}", file=sys.stderr)
        return BAD_SPEC
    except RecursionError:
        print("spec: not a spec: lists or objects nested too deeply", file=sys.stderr)
        return BAD_SPEC

    try:
        plan = make_plan(spec)
    except SpecError as problem:
        print(problem, file=sys.stderr)
        return BAD_SPEC

    if args.table:
        sys.stdout.write(render_table(plan))
    else:
        json.dump(plan, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
