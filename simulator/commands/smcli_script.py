"""SMcli's script language as the virtual SMcli reads it: commands split at `;` outside quotes,
`name=value` / `name=(list)` attributes, drive lists `t,d,s t,d,s`, and the exit codes of
SANtricity's SMcli (see simulator/commands/smcli.py)."""

from __future__ import annotations

import re

EXIT_USAGE, EXIT_NO_SCRIPT, EXIT_NO_ARRAY, EXIT_NAME = 1, 2, 4, 9
EXIT_SYNTAX, EXIT_COMMUNICATE, EXIT_EXECUTION = 13, 14, 16
UNITS = {"bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}


class ScriptError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def split_commands(script: str) -> list[str]:
    commands, current, quoted = [], [], False
    for c in script:
        if c == '"':
            quoted = not quoted
        if c == ";" and not quoted:
            commands.append("".join(current).strip())
            current = []
        else:
            current.append(c)
    if "".join(current).strip():
        raise ScriptError(
            EXIT_SYNTAX, f'Error 13 - A semicolon is missing after "{"".join(current).strip()}"'
        )
    return [c for c in commands if c]


def gigabytes(value: int) -> str:
    return f"{value / 1e9:,.3f} GB"


def name_argument(text: str) -> str | None:
    match = re.search(r'\[\s*"([^"]+)"\s*\]|"([^"]+)"', text)
    return (match.group(1) or match.group(2)) if match else None


def parse_attributes(text: str) -> dict[str, str]:
    attrs = {}
    for match in re.finditer(r'(\w+)\s*=\s*("([^"]*)"|\(([^)]*)\)|(\S+))', text):
        value = (
            match.group(3)
            if match.group(3) is not None
            else (match.group(4) if match.group(4) is not None else match.group(5))
        )
        attrs[match.group(1).lower()] = value.strip()
    return attrs


DRIVE_RE = r"\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\]"


def parse_drives(text: str) -> list[tuple[int, int, int]]:
    drives = []
    for item in text.split():
        parts = item.split(",")
        if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
            raise ScriptError(EXIT_SYNTAX, f"Error 13 - invalid drive location {item}")
        drives.append(tuple(int(p) for p in parts))
    return drives
