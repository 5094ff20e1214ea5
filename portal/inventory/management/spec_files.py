"""Reading what the spec commands (``inventory_import``, ``provision``) are given: a refusal is a
CommandError naming the file, never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import CommandError


def read_spec(source: str | Path) -> object:
    """The JSON of a spec file (``-``: standard input)."""
    try:
        text = sys.stdin.read() if str(source) == "-" else Path(source).read_text()
        return json.loads(text)
    except (OSError, ValueError) as error:  # unreadable, not UTF-8, not JSON
        raise CommandError(f"{source}: not a JSON spec: {error}") from None
    except RecursionError:
        raise CommandError(f"{source}: not a spec: nested too deeply") from None


def read_password(password_file: Path | None) -> str:
    """The BMC password kept in ``password_file``, as typed less its line end; empty without."""
    if password_file is None:
        return ""
    try:
        # Only the line's end goes: spaces are part of a password (the planner refuses them at
        # its ends, saying so, rather than have them silently changed here).
        # newline="": a carriage return is kept, and refused, rather than read as a line end.
        with open(password_file, encoding="utf-8", newline="") as handle:
            return handle.read().removesuffix("\n")
    except (OSError, ValueError) as error:  # unreadable, not UTF-8
        raise CommandError(f"{password_file}: {error}") from None
