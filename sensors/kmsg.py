"""What the kernel said about Lustre and LNet: the `LustreError:`, `Lustre:` and `LNetError:`
lines of the kernel log (`/dev/kmsg` under the root), one `kernel_log` point each.

A `/dev/kmsg` record is `priority,sequence,microseconds,flags[,...];message`, followed by
continuation lines that start with a space (the record's `KEY=value` dictionary, ignored here).
The priority's low three bits are the syslog severity, the rest the facility; only the kernel's
own records (facility 0) are read, so a program writing `LustreError:` into /dev/kmsg is not
taken for Lustre. On a real server /dev/kmsg is a character device: each read gives one record,
and a read fails with EPIPE when the records at the reader's position were overwritten in the
ring buffer (the next read goes on from the oldest one left). Anywhere else (a test tree, a
virtual host) it is a plain file holding the records, read whole each round.

Nothing is lost or sent twice across restarts: the last sequence number read and the kernel's
boot id (`proc/sys/kernel/random/boot_id`) are kept in the sensor's spool directory once the
round's points are sent or spooled (`commit`). A new boot id (or, without one, a sequence that
went backwards) means the server rebooted and the numbering started again. Records overwritten
before they were read show as a gap in the sequence and are counted (`kernel_lines_lost` of
the `sensor` point). A storm is bounded: past `max_lines` Lustre lines in one round, the rest
are counted in `kernel_storm` points (per target, message number and severity), not sent line
by line.

A line's time is the server's boot time (`btime` of `proc/stat`) plus the record's
microseconds, so a line read again after a crash lands on its own point; without `proc/stat`,
the round's time. Lines are kept 1 ms apart at least, within a round and from the last line
sent before it (kept with the sequence across restarts), so none overwrites another when the
kernel printed many in the same millisecond.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass

from sensors import schema
from sensors.layout import read_text
from sensors.lineproto import line, series
from sensors.parsers import ParseError
from sensors.rounds import Round

KMSG = "dev/kmsg"
BOOT_ID = "proc/sys/kernel/random/boot_id"
PROC_STAT = "proc/stat"
STATE_FILE = "kmsg.json"
# Lustre lines sent one by one per round and server; the rest of a storm is counted.
MAX_LINES = 100
# Records read from the device in one round at most (the rest wait for the next round).
MAX_RECORDS = 20000
RECORD_BYTES = 16384  # larger than any record the kernel hands out (8 KiB at most)
SEVERITIES = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")
SUBSYSTEMS = {"LustreError": "lustre", "Lustre": "lustre", "LNetError": "lnet"}

_LUSTRE_RE = re.compile(r"^(LustreError|Lustre|LNetError): (?:([0-9a-f]{1,4}-[0-9a-f]{1,4}): )?")
# `scratch-OST0003`, also inside `scratch-OST0003-osc-MDT0000` or `scratch-MDT0000_UUID`;
# not `osc-MDT0000` (a fs name is never preceded by a hyphen), except in the lock namespaces
# ldlm names its evictions by (`ns: filter-scratch-OST0003_UUID`, `mdt-scratch-MDT0000_UUID`).
_TARGET_RE = re.compile(
    r"(?:(?<=\bfilter-)|(?<=\bmdt-)|(?<![\w-]))(\w{1,8}-(?:OST|MDT)[0-9a-fA-F]{4})(?![0-9A-Za-z])"
)


@dataclass(frozen=True)
class KernelRecord:
    sequence: int
    priority: int
    microseconds: int
    message: str


def _record(number: int, text: str) -> KernelRecord:
    header, sep, message = text.partition(";")
    parts = header.split(",")
    if not sep or len(parts) < 4 or not all(part.isdigit() for part in parts[:3]):
        raise ParseError(
            f"line {number}: not a kmsg record (priority,sequence,microseconds,flags;message): "
            f"{text!r}"
        )
    return KernelRecord(int(parts[1]), int(parts[0]), int(parts[2]), message)


def parse_kmsg(text: str) -> list[KernelRecord]:
    """The records of a /dev/kmsg dump, in order; continuation lines are skipped."""
    records = []
    for number, text_line in enumerate(text.splitlines(), 1):
        if text_line and not text_line.startswith(" "):
            records.append(_record(number, text_line))
    return records


def lustre_line(record: KernelRecord) -> dict | None:
    """The tags of a kernel record that is a Lustre or LNet line, or None for any other:
    `subsystem` (`lustre`, `lnet`), `severity`, `message_number` (`11-0`), `fs` and
    `target` (the first target the message names)."""
    if record.priority >> 3:
        return None  # not the kernel's own (user space writing to /dev/kmsg)
    found = _LUSTRE_RE.match(record.message)
    if not found:
        return None
    tags = {
        schema.SUBSYSTEM: SUBSYSTEMS[found.group(1)],
        schema.SEVERITY: SEVERITIES[record.priority & 7],
    }
    if found.group(2):
        tags[schema.MESSAGE_NUMBER] = found.group(2)
    for label in _TARGET_RE.findall(record.message):
        ident = schema.split_device(label)
        if ident is not None:
            tags[schema.FS], tags[schema.TARGET] = ident
            break
    return tags


class KernelLog:
    """The kernel log of one server, read a round at a time from where the last round ended."""

    def __init__(self, root: str, state_dir: str | None = None, max_lines: int = MAX_LINES):
        self.path = os.path.join(root, KMSG)
        self.boot_id_path = os.path.join(root, BOOT_ID)
        self.stat_path = os.path.join(root, PROC_STAT)
        self.state_path = os.path.join(state_dir, STATE_FILE) if state_dir else None
        self.max_lines = max_lines
        self.boot_id, self.sequence, self.last_time = self._load()
        self._saved = (self.boot_id, self.sequence, self.last_time)
        self._fd: int | None = None

    def _load(self) -> tuple[str, int, int]:
        """The boot id, the last sequence read and the last line's time (ms) kept."""
        if self.state_path is None:
            return "", -1, 0
        try:
            with open(self.state_path, encoding="utf-8") as handle:
                state = json.load(handle)
            return str(state["boot_id"]), int(state["sequence"]), int(state.get("time", 0))
        except FileNotFoundError:
            return "", -1, 0
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return "", -1, 0  # unreadable: start again from the ring's oldest record

    def commit(self) -> None:
        """Keep the last sequence read, once the round's points are sent or spooled."""
        now = (self.boot_id, self.sequence, self.last_time)
        if self.state_path is None or now == self._saved:
            return
        os.makedirs(os.path.dirname(self.state_path), exist_ok=True)
        temporary = f"{self.state_path}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump({"boot_id": now[0], "sequence": now[1], "time": now[2]}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.state_path)
        self._saved = now

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def collect(self, rnd: Round) -> None:
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            return
        for field in schema.KERNEL_COUNT_FIELDS:  # every round, 0 when nothing came
            rnd.counts[field] = 0
        boot_id = _first_line(self.boot_id_path)
        if boot_id and boot_id != self.boot_id:
            # a new boot: a new numbering, and its own clock
            self.boot_id, self.sequence, self.last_time = boot_id, -1, 0
        if stat.S_ISCHR(mode):
            records = self._read_device(rnd)
        else:
            records = rnd.parse(self.path, parse_kmsg)
            if records and not boot_id and records[-1].sequence < self.sequence:
                self.sequence = -1  # the numbering went back: rebooted
        if records:
            self._points(rnd, records)

    def _read_device(self, rnd: Round) -> list[KernelRecord]:
        records: list[KernelRecord] = []
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            while len(records) < MAX_RECORDS:
                try:
                    chunk = os.read(self._fd, RECORD_BYTES)
                except BlockingIOError:
                    break  # read up to the newest record
                except OSError as error:
                    if error.errno == errno.EPIPE:
                        continue  # overwritten before read: the gap in the sequence counts it
                    raise
                if not chunk:
                    break
                text = chunk.decode("utf-8", "replace").split("\n", 1)[0]
                try:
                    records.append(_record(1, text))
                except ParseError as error:
                    # Counted and passed: the device reads on from the next record (reopened,
                    # it would start at the oldest and stop at this one every round).
                    rnd.problem(self.path, error)
        except OSError as error:
            rnd.problem(self.path, error)
            self.close()
        return records

    def _points(self, rnd: Round, records: list[KernelRecord]) -> None:
        boot_ms = _boot_ms(self.stat_path)
        last_time = self.last_time
        sent = lost = 0
        storms: dict[tuple, list[int]] = {}
        for record in records:
            if record.sequence <= self.sequence:
                continue
            if self.sequence >= 0 and record.sequence > self.sequence + 1:
                lost += record.sequence - self.sequence - 1
            self.sequence = record.sequence
            tags = lustre_line(record)
            if tags is None:
                continue
            if sent >= self.max_lines:
                storm = storms.setdefault(tuple(sorted(tags.items())), [0, record.sequence, 0])
                storm[0] += 1
                storm[2] = record.sequence
                continue
            sent += 1
            when = rnd.timestamp if boot_ms is None else boot_ms + record.microseconds // 1000
            last_time = max(when, last_time + 1)
            encoded = line(
                series(schema.KERNEL_LOG.name, {**rnd.tags, **tags}),
                {"message": record.message, "sequence": record.sequence},
                last_time,
            )
            if encoded is not None:
                rnd.lines.append(encoded)
        for key, (count, first, last) in storms.items():
            rnd.add(
                schema.KERNEL_STORM.name,
                dict(key),
                {"lines": count, "first_sequence": first, "last_sequence": last},
            )
        self.last_time = last_time
        suppressed = sum(storm[0] for storm in storms.values())
        rnd.counts["kernel_lines"] = sent
        rnd.counts["kernel_lines_suppressed"] = suppressed
        rnd.counts["kernel_lines_lost"] = lost


def _first_line(path: str) -> str:
    try:
        return read_text(path).strip()
    except OSError:
        return ""


def _boot_ms(path: str) -> int | None:
    """The server's boot time in ms since the epoch (`btime` of /proc/stat)."""
    try:
        text = read_text(path)
    except OSError:
        return None
    for stat_line in text.splitlines():
        if stat_line.startswith("btime "):
            value = stat_line.split()[1]
            return int(value) * 1000 if value.isdigit() else None
    return None
