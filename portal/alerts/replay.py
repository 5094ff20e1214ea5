"""Replay observations of a condition through the alert timing, as a command.

    python -m portal.alerts.replay --for S --clear-for S --repeat S FILE

FILE (or ``-`` for standard input) holds JSON lines ``{"t": <epoch seconds>, "object":
"<name>", "true": <bool>}``, one observation per line, in time order, objects interleaved. The
command prints one JSON line per notification, ``{"t": ..., "object": ..., "kind":
"firing"|"reminder"|"resolved"}``, with the semantics of ``portal.alerts.engine``. Bad input is
refused with a message naming the line, and nothing is printed.

With ``--group-by-field NAME`` the observations are grouped by that field of each line (a line
without it is a group of its own object) and the command prints the groups' mails instead, as
``portal.alerts.grouping`` sends them (``--group-wait S``, ``--group-interval S``): one JSON line
per group notification, ``{"t": ..., "group": ..., "kind": "firing"|"update"|"reminder"|
"resolved", "objects": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable

from portal.alerts import grouping
from portal.alerts.engine import Timing, replay


class InputError(ValueError):
    """A line of the input that cannot be used; the message names the line."""


def parse_observations(lines: Iterable[str]) -> list[tuple[float, str, bool]]:
    return [(t, name, true) for t, name, true, _ in _parse(lines, "")]


def parse_grouped_observations(
    lines: Iterable[str], group_field: str
) -> list[tuple[float, str, bool, str]]:
    """Observations with their group: the line's ``group_field``, or its object without it."""
    return list(_parse(lines, group_field))


def _parse(lines: Iterable[str], group_field: str) -> list[tuple[float, str, bool, str]]:
    observations: list[tuple[float, str, bool, str]] = []
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
        group = name
        if group_field and group_field in record:
            group = record[group_field]
            if not isinstance(group, str) or not group:
                raise InputError(
                    f"line {number}: {group_field!r} must be a non-empty string, not {group!r}"
                )
        previous = t
        observations.append((t, name, true, group))
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
    parser.add_argument(
        "--group-by-field",
        dest="group_field",
        default="",
        metavar="NAME",
        help="group the observations by this field of each line (a line without it is a group "
        "of its own object) and print the groups' mails instead: one JSON line per group "
        'notification, {"t", "group", "kind": firing|update|reminder|resolved, "objects"}; '
        "the firing lists every member, an update the members that joined since the last "
        "mail, a reminder the firing members (at the --repeat interval, per group), the "
        "resolution (when every member has resolved) every member. A group whose firing was "
        "never sent sends no resolution",
    )
    parser.add_argument(
        "--group-wait",
        dest="group_wait",
        type=_seconds,
        default=None,
        metavar="S",
        help="with --group-by-field: how long a group's first mail waits after its first "
        f"member fires (seconds, default {grouping.DEFAULT_GROUP_WAIT:g})",
    )
    parser.add_argument(
        "--group-interval",
        dest="group_interval",
        type=_seconds,
        default=None,
        metavar="S",
        help="with --group-by-field: members that join later are mailed together this long "
        f"after the group's last mail (seconds, default {grouping.DEFAULT_GROUP_INTERVAL:g})",
    )
    parser.add_argument("file", metavar="FILE", help="JSON lines of observations, or - for stdin")
    args = parser.parse_args(argv)
    if not args.group_field and (args.group_wait is not None or args.group_interval is not None):
        parser.error("--group-wait and --group-interval need --group-by-field")
    timing = Timing(args.for_seconds, args.clear_seconds, args.repeat_seconds)
    try:
        if args.file == "-":
            observations = _parse(sys.stdin, args.group_field)
        else:
            with open(args.file, encoding="utf-8") as handle:
                observations = _parse(handle, args.group_field)
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
    if args.group_field:
        group_timing = grouping.GroupTiming(
            grouping.DEFAULT_GROUP_WAIT if args.group_wait is None else args.group_wait,
            grouping.DEFAULT_GROUP_INTERVAL if args.group_interval is None else args.group_interval,
        )
        for note in grouping.replay_groups(observations, timing, group_timing):
            line = {"t": note.t, "group": note.group, "kind": note.kind, "objects": note.objects}
            out.write(json.dumps(line) + "\n")
        return 0
    for note in replay([(t, name, true) for t, name, true, _ in observations], timing):
        out.write(json.dumps({"t": note.t, "object": note.object, "kind": note.kind}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
