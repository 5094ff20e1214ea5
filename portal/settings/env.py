"""Small typed readers for settings that come from environment variables.

Each helper fails at start-up with a message that names the variable, so a typo in a unit file
shows at once instead of as odd behaviour later. Secrets may also come from ``<NAME>_FILE``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path


class SettingError(RuntimeError):
    """A setting from the environment has a value that cannot be used."""


_MISSING = object()


def env_str(name: str, default: str | object = _MISSING) -> str:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text().strip()
        except OSError as error:
            raise SettingError(f"{name}_FILE: cannot read {file_path}: {error.strerror}") from error
    value = os.environ.get(name)
    if value is not None:
        return value
    if default is _MISSING:
        raise SettingError(f"{name}: required but not set")
    return str(default)


def env_int(name: str, default: int) -> int:
    raw = env_str(name, str(default))
    try:
        return int(raw)
    except ValueError:
        raise SettingError(f"{name}: expected a whole number, got {raw!r}") from None


def env_bool(name: str, default: bool) -> bool:
    raw = env_str(name, "1" if default else "0").strip().lower()
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off", ""}:
        return False
    raise SettingError(f"{name}: expected true or false, got {raw!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = env_str(name, ",".join(default))
    return [item.strip() for item in raw.split(",") if item.strip()]


_RATE_RE = re.compile(r"[0-9]+/(s|sec|second|m|min|minute|h|hour|d|day)")


def env_rate(name: str, default: str) -> str | None:
    """A request rate as DRF's throttling writes it, ``NUMBER/PERIOD`` (second, minute, hour or
    day), e.g. ``3000/minute``; empty for no limit."""
    raw = env_str(name, default).strip()
    if not raw:
        return None
    if not _RATE_RE.fullmatch(raw):
        raise SettingError(f"{name}: expected a rate such as 3000/minute, got {raw!r}")
    return raw
