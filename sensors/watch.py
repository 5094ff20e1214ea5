"""Whether the sensor's configuration changed under it, so `sensors run` starts again with the
new one by itself: no unit to restart, no process to kill (provisioning only writes files).

Watched: the configuration file and every file it names as a password file (a `password_file`
key in any section, read when the sensor starts). Between rounds each file costs one stat; a
file whose stat moved is read and compared by content, so a file rewritten with the same text
is no change. A changed configuration is loaded (as the new process would load it) before the
sensor is told: one that does not load is logged once and the running one is kept until it is
fixed, so a half-written set of files never stops the sensor.
"""

from __future__ import annotations

import configparser
import hashlib
import logging
import os
import time
from pathlib import Path

from sensors.config import ConfigError, load_config

log = logging.getLogger("sensors")

UNCHANGED, CHANGED, GONE = "unchanged", "changed", "gone"
GONE_RECHECK_SECONDS = 1.0


def password_files(config_text: str) -> list[Path]:
    """The files a configuration names as password files, in any section."""
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";",))
    try:
        parser.read_string(config_text)
    except configparser.Error:
        return []  # the sensor refuses such a file when it loads it
    named = {
        parser.get(section, "password_file").strip()
        for section in parser.sections()
        if parser.has_option(section, "password_file")
    }
    return [Path(name) for name in sorted(named) if name]


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def _content(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _digest(content: bytes | None) -> str | None:
    return None if content is None else hashlib.sha256(content).hexdigest()


class ConfigWatch:
    """The configuration at ``path`` and its password files as they were when made. Make it
    before loading the configuration: a change in between is then seen, not missed."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        content = _content(self.path)
        text = (content or b"").decode("utf-8", errors="replace")
        self._seen: dict[Path, tuple[tuple[int, int, int] | None, str | None]] = {
            self.path: (_signature(self.path), _digest(content))
        }
        for file in password_files(text):
            self._seen[file] = (_signature(file), _digest(_content(file)))
        self._refused = ""
        self.state = UNCHANGED

    @property
    def files(self) -> list[Path]:
        return list(self._seen)

    def _moved(self) -> bool:
        """Whether a watched file's content differs from when the sensor started."""
        moved = False
        for file, (signature, digest) in self._seen.items():
            now = _signature(file)
            if now == signature:
                continue
            if _digest(_content(file)) != digest:
                moved = True
            else:  # rewritten with the same content, or touched: remember its new stat
                self._seen[file] = (now, digest)
        return moved

    def _gone(self) -> bool:
        if self.path.exists():
            return False
        # An editor may save by moving the old file away first: look again a moment later.
        time.sleep(GONE_RECHECK_SECONDS)
        return not self.path.exists()

    def changed(self) -> bool:
        """True when the sensor should stop its rounds: its configuration is gone (``state``
        GONE) or another one loads (CHANGED). Called between rounds."""
        if self._gone():
            self.state = GONE
            log.info("configuration %s is gone: stopping", self.path)
            return True
        if not self._moved():
            self._refused = ""
            return False
        try:
            load_config(self.path)
        except ConfigError as error:
            if str(error) != self._refused:
                log.error("new configuration refused, running on with the one before: %s", error)
                self._refused = str(error)
            return False
        self.state = CHANGED
        log.info("configuration %s changed: starting again with it", self.path)
        return True
