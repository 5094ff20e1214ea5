"""Read obdfilter-survey output: the ``.summary`` file or the script's stdout, any release from
1.8 to 2.17 (format notes: tests/fixtures/obdfilter-survey/README.md).

A result line is ``ost N sz NK rsz N[K] obj N thr N`` then, per test, ``<test> <MB/s>`` and
either ``[min, max]`` (with or without a space after the comma), ``ERROR`` or ``SHORT``. Fields
are padded, so the line is read by pattern, not by column. A line may end in ``created object
#s on HOST:OST not contiguous`` (the run stopped there) or ``Too much buffer space`` (that
combination was skipped, up to 2.7). The header, ``using LCTL=...`` and ``done!`` are known and
passed over; the script's own failure messages become an ``aborted`` entry; any other line is
refused with its number: nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

NUMBER = r"\d+(?:\.\d+)?"
_PREFIX = re.compile(
    r"^ost\s+(?P<ost>\d+)\s+sz\s+(?P<sz>\d+)K\s+rsz\s+(?P<rsz>\d+)K?\s+"
    r"obj\s+(?P<obj>\d+)\s+thr\s+(?P<thr>\d+)(?P<rest>.*)$"
)
_TEST = re.compile(
    rf"\s*(?P<test>[a-z_]+)\s+(?P<mb_s>{NUMBER})\s+"
    rf"(?:\[\s*(?P<min>{NUMBER})\s*,\s*(?P<max>{NUMBER})\s*\]|(?P<flag>ERROR|SHORT))"
)
_NOT_CONTIGUOUS = re.compile(r"^\s*created object #s on \S+ not contiguous\s*$")
_BUFFER_SPACE = "Too much buffer space"
_HEADER = re.compile(r"Obdfilter-survey for case=\S+ from \S+\s*$")
_INFORMATION = (re.compile(r"^using LCTL="), re.compile(r"^done!\s*$"))
# Messages with which the script gives up before or between result lines (stdout only).
_FAILURES = (
    re.compile(r"^error: lctl not found"),
    re.compile(r"^Test disk case support maximum \d+KB IO data"),
    re.compile(r"^Can't find any OSTs to test"),
    re.compile(r"^OST \S+ not setup"),
    re.compile(r"^Can't setup echo-client"),
    re.compile(r"^no echo client and ost_name not set"),
    re.compile(r"^Could not install obdecho on "),
    re.compile(r"^obdecho not setup on server"),
    re.compile(r"^ost not setup on server"),
    re.compile(r"^Specify hostname or ip-address of server"),
    re.compile(r"^The existing setup must be cleaned"),
    re.compile(r"^First test must be 'write'"),
    re.compile(r"^tests: "),
    re.compile(r"^program exited with error\s*$"),
    re.compile(r"^Terminated\s*$"),
    re.compile(r"^case=\S+ needs echo servers"),
)


class SurveyParseError(ValueError):
    """A line that is not obdfilter-survey output; the message names its number."""


@dataclass
class Result:
    """One summary line: one (record size, objects, threads) combination, every test."""

    line: int
    ost: int | None = None
    sz_kib: int | None = None
    rsz_kib: int | None = None
    obj: int | None = None
    thr: int | None = None
    tests: dict[str, dict] = field(default_factory=dict)
    aborted: str | None = None
    skipped: str | None = None

    def as_json(self) -> dict:
        record: dict = {}
        if self.ost is not None:
            record.update(
                ost=self.ost,
                sz_kib=self.sz_kib,
                rsz_kib=self.rsz_kib,
                obj=self.obj,
                thr=self.thr,
                tests=self.tests,
            )
        if self.aborted is not None:
            record["aborted"] = self.aborted
        if self.skipped is not None:
            record["skipped"] = self.skipped
        return record


def parse_lines(lines: Iterable[str]) -> list[Result]:
    results = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        match = _PREFIX.match(line.strip())
        if match:
            results.append(_result(number, match))
        elif any(pattern.search(line) for pattern in _INFORMATION) or _HEADER.search(line):
            continue
        elif any(pattern.search(line) for pattern in _FAILURES):
            results.append(Result(line=number, aborted=line.strip()))
        else:
            raise SurveyParseError(
                f"line {number}: not an obdfilter-survey summary line: {line.strip()[:120]!r}"
            )
    return results


def _result(number: int, match: re.Match) -> Result:
    result = Result(
        line=number,
        ost=int(match["ost"]),
        sz_kib=int(match["sz"]),
        rsz_kib=int(match["rsz"]),
        obj=int(match["obj"]),
        thr=int(match["thr"]),
    )
    rest = match["rest"]
    position = 0
    while True:
        test = _TEST.match(rest, position)
        if not test:
            break
        name = test["test"]
        if name in result.tests:
            raise SurveyParseError(f"line {number}: test {name!r} appears twice")
        if test["flag"]:
            result.tests[name] = {"mb_s": float(test["mb_s"]), "flag": test["flag"]}
        else:
            result.tests[name] = {
                "mb_s": float(test["mb_s"]),
                "min": float(test["min"]),
                "max": float(test["max"]),
            }
        position = test.end()
    tail = rest[position:]
    if _NOT_CONTIGUOUS.match(tail):
        result.aborted = tail.strip()
    elif tail.strip() == _BUFFER_SPACE:
        result.skipped = _BUFFER_SPACE
    elif tail.strip():
        raise SurveyParseError(f"line {number}: cannot read {tail.strip()[:80]!r}")
    elif not result.tests:
        raise SurveyParseError(f"line {number}: a result line without any test")
    return result
