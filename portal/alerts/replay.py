"""Replay observations of a condition through the alert timing, as a command.

    python -m portal.alerts.replay --for S --clear-for S --repeat S FILE

FILE (or ``-`` for standard input) holds JSON lines ``{"t": <epoch seconds>, "object":
"<name>", "true": <bool>}``, one observation per line, in time order, objects interleaved. The
command prints one JSON line per notification, ``{"t": ..., "object": ..., "kind":
"firing"|"reminder"|"resolved"}``, with the semantics of ``portal.alerts.engine``. Bad input is
refused with a message naming the line, and nothing is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable

from portal.alerts.engine import Timing, replay


class InputError(ValueError):
    """A line of the input that cannot be used; the message names the line."""


def parse_observations(lines: Iterable[str]) -> list[tuple[float, str, bool]]:
    observations: list[tuple[float, str, bool]] = []
    previous: float | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"line {number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise InputError(f"line {number}: expected an object with t, object and true")
        missing = [key for key in ("t", "object", "true") if key not in record]
        if missing:
            raise InputError(f"line {number}: missing {', '.join(repr(k) for k in missing)}")
        t, name, true = record["t"], record["object"], record["true"]
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
            raise InputError(f"line {number}: 't' must be a number of epoch seconds, not {t!r}")
        if not isinstance(name, str) or not name:
            raise InputError(f"line {number}: 'object' must be a non-empty string, not {name!r}")
        if not isinstance(true, bool):
            raise InputError(f"line {number}: 'true' must be true or false, not {true!r}")
        if previous is not None and t < previous:
            raise InputError(
                f"line {number}: t {t} is earlier than the line before ({previous}); "
                "observations must be in time order"
            )
        previous = t
        observations.append((t, name, true))
    return observations


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must be zero or more")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m portal.alerts.replay",
        description="Print the notifications (firing, reminder, resolved) that a series of "
        "observations of an alert condition would produce.",
    )
    parser.add_argument(
        "--for",
        dest="for_seconds",
        type=_seconds,
        default=0.0,
        metavar="S",
        help="how long the condition must hold before it fires (seconds, default 0)",
    )
    parser.add_argument(
        "--clear-for",
        dest="clear_seconds",
        type=_seconds,
        default=0.0,
        metavar="S",
        help="how long it must be false before it resolves (seconds, default 0)",
    )
    parser.add_argument(
        "--repeat",
        dest="repeat_seconds",
        type=_seconds,
        default=0.0,
        metavar="S",
        help="interval of reminders while firing (seconds, 0 = none, the default)",
    )
    parser.add_argument("file", metavar="FILE", help="JSON lines of observations, or - for stdin")
    args = parser.parse_args(argv)
    timing = Timing(args.for_seconds, args.clear_seconds, args.repeat_seconds)
    try:
        if args.file == "-":
            observations = parse_observations(sys.stdin)
        else:
            with open(args.file, encoding="utf-8") as handle:
                observations = parse_observations(handle)
    except OSError as error:
        print(f"replay: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"replay: {args.file} is not UTF-8 text", file=sys.stderr)
        return 2
    except InputError as error:
        print(f"replay: {args.file}: {error}", file=sys.stderr)
        return 2
    out = sys.stdout
    for note in replay(observations, timing):
        out.write(json.dumps({"t": note.t, "object": note.object, "kind": note.kind}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
