"""``python -m provisioning.survey parse FILE`` and ``judge PLAN.json FILE``.

parse prints one JSON line per result line of an obdfilter-survey summary (stdout or the
``.summary`` file); judge prints the verdict of the survey against the plan's expected
bandwidth as one JSON object. ``-`` reads FILE from standard input. Unreadable input exits with
status 2 and a message naming the line (or the file); a verdict, pass or fail, exits with 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from provisioning.survey.judge import DEFAULT_TOLERANCE, judge
from provisioning.survey.parse import Result, SurveyParseError, parse_lines

BAD_INPUT = 2


def _read_results(path: str) -> list[Result]:
    if path == "-":
        return parse_lines(sys.stdin)
    with open(path, encoding="utf-8", errors="strict") as handle:
        return parse_lines(handle)


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value > 1:
        value /= 100  # given as a percentage
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a fraction (0.9) or a percentage (90)")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m provisioning.survey",
        description="Read and judge obdfilter-survey results.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    parse = commands.add_parser("parse", help="print one JSON line per result line")
    parse.add_argument("file", metavar="FILE")
    judged = commands.add_parser("judge", help="compare a survey with the plan's bandwidth")
    judged.add_argument("plan", metavar="PLAN.json", help="the planner's JSON of the SSU")
    judged.add_argument("file", metavar="FILE")
    judged.add_argument(
        "--tolerance",
        type=_tolerance,
        default=DEFAULT_TOLERANCE,
        help="share of the expected bandwidth that passes (default 0.9; 90 works too)",
    )
    args = parser.parse_args(argv)

    try:
        results = _read_results(args.file)
    except OSError as error:
        print(f"survey: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return BAD_INPUT
    except UnicodeDecodeError:
        print(f"survey: {args.file} is not text", file=sys.stderr)
        return BAD_INPUT
    except SurveyParseError as error:
        print(f"survey: {args.file}: {error}", file=sys.stderr)
        return BAD_INPUT

    if args.command == "parse":
        for result in results:
            sys.stdout.write(json.dumps(result.as_json()) + "\n")
        return 0

    try:
        with open(args.plan, encoding="utf-8") as handle:
            plan = json.load(handle)
        if not isinstance(plan.get("expected_bandwidth_mb_s"), dict) or "targets" not in plan:
            raise TypeError("not a plan")
    except OSError as error:
        print(f"survey: cannot read {args.plan}: {error.strerror}", file=sys.stderr)
        return BAD_INPUT
    except (json.JSONDecodeError, AttributeError, TypeError):
        print(
            f"survey: {args.plan} is not a plan (the JSON of python -m provisioning.plan)",
            file=sys.stderr,
        )
        return BAD_INPUT
    verdict = judge(plan, results, args.tolerance)
    sys.stdout.write(json.dumps(verdict.as_json()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
