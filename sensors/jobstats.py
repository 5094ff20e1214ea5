"""The `ost_job`/`mdt_job` fields of a job_stats file, read fast.

job_stats is by far the largest thing a sensor reads (about 40 KB per OST with a few dozen
jobs, 90 MB per round on a 2,400-OST rack), and reading it line by line with patterns costs
about 4 ms per OST. Here a plain substring test drops the counters that are still zero (most
of them), a compiled pattern reads the others and keeps only what the collector writes (name,
samples, unit, sum), and each job's encoded fields are remembered by the exact text of its
block: a job whose block did not change since the last round (Lustre moves a job's
`snapshot_time` whenever its counters move) costs one dictionary look-up.

The reference reading stays `sensors.parsers.parse_job_stats`: when a file holds anything
this fast path does not recognise (a line in another shape, counts that do not add up), the
whole file is read with the reference parser instead, so no format variant is ever lost, only
read slower. The tests check that both readings agree on every real sample.
"""

from __future__ import annotations

import re

from sensors.parsers import parse_job_stats

JOB_MARK = "\n- job_id:"
_COUNTER_RE = re.compile(
    r"^  (\w+): *\{ samples: *(\d+), unit: *(\w+)"
    r"(?:, min: *\d+, max: *\d+, sum: *(\d+)(?:, sumsq: *\d+)?(?:, hist: \{[^}]*\})?)? *\}\s*$"
)
# A counter line that has not counted anything yet (`samples:           0, unit: ...`).
ZERO_MARK = " 0, unit:"
_HEX_ESCAPE_RE = re.compile(r"\\x([0-9A-Fa-f]{2})")
_LATENCY_UNITS = {"usecs": "_usecs", "usec": "_usecs", "secs": "_secs", "sec": "_secs"}

# (name, samples, unit, sum): numbers as printed (digit strings), sum "" when not printed.
Counter = tuple[str, str, str, str]


class NotRecognised(ValueError):
    """The text is not in a shape the fast path reads; use the reference parser."""


def unquote_job_id(raw: str) -> str:
    """Job ids are quoted from 2.15.4 (with `\\xHH` escapes); keep the id itself, colons too."""
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        raw = raw[1:-1]
        if "\\x" in raw:
            raw = _HEX_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), raw)
    return raw


def fast_job_blocks(text: str) -> list[tuple[str, str]]:
    """[(job id, block text)] of a job_stats file; raises NotRecognised."""
    parts = ("\n" + text).split(JOB_MARK)
    if parts[0].strip() not in ("job_stats:", ""):
        raise NotRecognised("text before the first job is not `job_stats:`")
    blocks = []
    for part in parts[1:]:
        end = part.find("\n")
        if end < 0:
            end = len(part)
        blocks.append((unquote_job_id(part[:end].strip()), part[end:]))
    return blocks


def fast_counters(block: str) -> list[Counter]:
    """The counters of one job that have counted something (most have not: they are skipped
    by a plain substring test, without a pattern match). Raises NotRecognised when a counter
    line is not in a known format, or the lines do not add up."""
    rows = [row for row in block.split("\n") if "{" in row and ZERO_MARK not in row]
    counters = []
    for row in rows:
        match = _COUNTER_RE.match(row)
        if match is None:
            raise NotRecognised(f"not a job counter line: {row!r}")
        counters.append(match.groups(""))
    # Every counter line has one `{` of its own (a `hist: {` adds one more).
    expected = block.count("{") - block.count("hist: {") - block.count(ZERO_MARK)
    if len(counters) != expected:
        raise NotRecognised("counter lines do not add up")
    return counters


def reference_jobs(text: str) -> list[tuple[str, list[Counter]]]:
    """The same shape, read with sensors.parsers.parse_job_stats (raises its ParseError)."""
    jobs = []
    for job in parse_job_stats(text):
        counters = [
            (
                name,
                str(c["samples"]),
                c["unit"],
                "" if c["sum"] is None else str(c["sum"]),
            )
            for name, c in job["counters"].items()
        ]
        jobs.append((job["job_id"], counters))
    return jobs


def encode_job_fields(counters: list[Counter], ost: bool) -> str:
    """Line-protocol fields of one job (see README: `ost_job`). Bytes counters always appear
    (`X_bytes` = sum, `X_calls` = samples, for `read_bytes`/`write_bytes` and the 2.3-2.5
    byte counters `read`/`write`); other counters only once non-zero, as Lustre itself omits
    zero counters from its stats files: `op` = samples, plus `op_usecs` for latencies (the
    2.14+ `read`/`write` latencies give `read_usecs`/`write_usecs` only)."""
    parts = []
    seen_bytes = set()
    for name, samples, unit, total in counters:
        if unit == "bytes":
            base = name[:-6] if name.endswith("_bytes") else name
            seen_bytes.add(base)
            parts.append(f"{base}_calls={samples}i,{base}_bytes={total or 0}i")
            continue
        if samples == "0":
            continue
        suffix = _LATENCY_UNITS.get(unit)
        if suffix is None:
            parts.append(f"{name}={samples}i")
            if total:
                parts.append(f"{name}_sum={total}i")
            continue
        if suffix != "_usecs" or name not in ("read", "write"):
            parts.append(f"{name}={samples}i")
        if total:
            parts.append(f"{name}{suffix}={total}i")
    if ost:
        for base in ("read", "write"):
            if base not in seen_bytes:
                parts.append(f"{base}_calls=0i,{base}_bytes=0i")
    return ",".join(parts)


class JobStatsReader:
    """Encoded fields of each job of one target, remembered from the previous round."""

    def __init__(self) -> None:
        self._previous: dict[str, dict[str, str]] = {}
        self._current: dict[str, dict[str, str]] = {}
        self.fallbacks = 0  # files read with the reference parser (for tests and the bench)

    def new_round(self) -> None:
        """Forget jobs that were not seen in the last round."""
        self._previous, self._current = self._current, {}

    def read(self, target_key: str, text: str, ost: bool) -> list[tuple[str, str]]:
        """[(job id, encoded fields)] of one job_stats file; raises the reference parser's
        error when the text is not job_stats at all. Jobs with an empty id are left out."""
        previous = self._previous.get(target_key, {})
        current: dict[str, str] = {}
        self._current[target_key] = current
        jobs = []
        try:
            for job_id, block in fast_job_blocks(text):
                fields = previous.get(block)
                if fields is None:
                    fields = encode_job_fields(fast_counters(block), ost)
                current[block] = fields
                if job_id:
                    jobs.append((job_id, fields))
            return jobs
        except NotRecognised:
            self.fallbacks += 1
            current.clear()
            return [
                (job_id, encode_job_fields(counters, ost))
                for job_id, counters in reference_jobs(text)
                if job_id
            ]
