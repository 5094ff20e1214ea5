"""Parsers for the text that Lustre servers publish under /proc, /sys and debugfs, and for the
output of the few commands the sensors read (`lctl get_param`, `lnetctl`, obdfilter-survey).

Pure functions of one text to plain dicts and lists, standard library only, so that the sensor
agent runs on a Lustre server with nothing else installed. They accept every layout seen in the
real samples from Lustre 2.1 to 2.16 (see sensors/tests/fixtures/lustre/SOURCES.md):

- generic `stats` files (`obdfilter.*.stats`, `mdt.*.md_stats`, `ost.OSS.*.stats`, per-export
  stats, llite, osd): `name samples [unit]` then 0, 3 or 4 numbers; a name may repeat.
- `job_stats` (OST and MDT): YAML-like blocks, job ids quoted (2.15.4+) or not, `min:%8llu`
  with or without a space, optional `sumsq` and `hist`.
- `brw_stats`: the tabular format of every version, tab or space separated.
- single values, `health_check`, `recovery_status`, LNet `stats`, `nis`/`peers` tables.

Times are returned as float seconds. Counter values are Python ints (never rounded).
"""

from __future__ import annotations

import re

__all__ = [
    "BRW_SECTIONS",
    "job_bytes",
    "parse_brw_stats",
    "parse_health_check",
    "parse_job_stats",
    "parse_lctl_get_param",
    "parse_lnet_stats",
    "parse_lnet_table",
    "parse_obdfilter_survey",
    "parse_recovery_status",
    "parse_single_value",
    "parse_stats",
    "parse_yaml_block",
]


class ParseError(ValueError):
    """The text is not in the format the parser expects."""


# ---------------------------------------------------------------------------------------------
# time stamps


def _parse_time(value: str, units: str = "") -> float:
    """`1704924081.852375764` with `secs.nsecs`, or `1438693238.20113` with `secs.usecs`.

    Up to 2.9 the microseconds were printed with `%lu`, not zero-padded, so `.20113` means
    0.020113 s there; with nsecs (`%09lu`) the fraction is padded and reads as written.
    """
    if "." not in value:
        return float(int(value))
    secs, frac = value.split(".", 1)
    if "usecs" in units:
        return int(secs) + int(frac) / 1e6
    if "nsecs" in units:
        return int(secs) + int(frac) / 1e9
    return float(value)


_HEADER_RE = re.compile(
    r"^\s*(snapshot_time|start_time|elapsed_time):?\s+(\d+(?:\.\d+)?)\s*\(?([a-z.]*)\)?\s*$"
)


# ---------------------------------------------------------------------------------------------
# generic stats


_STATS_LINE_RE = re.compile(r"^(\S+(?: \S+)*?)\s+(\d+) samples \[([^\]]*)\]((?:\s+-?\d+)*)\s*$")


def parse_stats(text: str) -> dict:
    """Parse a generic Lustre stats file.

    Returns ``{"snapshot_time": float|None, "start_time": float|None, "elapsed_time":
    float|None, "counters": {name: {"samples", "unit", "min", "max", "sum", "sumsq"}}}``;
    min/max/sum/sumsq are None when the line does not carry them.

    A name printed twice (2.10's `obdfilter.*.stats` has two `statfs` lines, counted by two
    layers) is merged: samples and sums add up, min and max are the extremes.
    """
    result: dict = {"snapshot_time": None, "start_time": None, "elapsed_time": None}
    counters: dict[str, dict] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        header = _HEADER_RE.match(line)
        if header:
            result[header.group(1)] = _parse_time(header.group(2), header.group(3))
            continue
        match = _STATS_LINE_RE.match(line)
        if not match:
            raise ParseError(f"not a stats line: {line!r}")
        name, samples, unit, numbers = match.groups()
        values = [int(v) for v in numbers.split()]
        if len(values) not in (0, 3, 4):
            raise ParseError(f"expected 0, 3 or 4 numbers: {line!r}")
        counter = {
            "samples": int(samples),
            "unit": unit,
            "min": values[0] if values else None,
            "max": values[1] if values else None,
            "sum": values[2] if values else None,
            "sumsq": values[3] if len(values) == 4 else None,
        }
        if name in counters:
            counters[name] = _merge_counters(counters[name], counter)
        else:
            counters[name] = counter
    result["counters"] = counters
    return result


def _merge_counters(first: dict, second: dict) -> dict:
    merged = dict(first)
    merged["samples"] = first["samples"] + second["samples"]
    for key, pick in (("min", min), ("max", max)):
        values = [c[key] for c in (first, second) if c[key] is not None]
        merged[key] = pick(values) if values else None
    for key in ("sum", "sumsq"):
        values = [c[key] for c in (first, second) if c[key] is not None]
        merged[key] = sum(values) if values else None
    return merged


# ---------------------------------------------------------------------------------------------
# job_stats


_JOB_ID_RE = re.compile(r"^- job_id:\s*(.*?)\s*$")
_JOB_COUNTER_RE = re.compile(r"^\s+(\w+):\s*\{(.*)\}\s*$")
_JOB_FIELD_RE = re.compile(r"(\w+):\s*(\{[^}]*\}|[^,]+?)\s*(?:,|$)")
_HEX_ESCAPE_RE = re.compile(r"\\x([0-9A-Fa-f]{2})")


def _unquote_job_id(raw: str) -> str:
    """Job ids are printed raw up to 2.15.3 and in double quotes, with `\\xHH` escapes for
    unusual characters, from 2.15.4. Return the id itself, colons kept."""
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        raw = raw[1:-1]
        return _HEX_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), raw)
    return raw


def _parse_hist(text: str) -> dict[str, int]:
    inner = text.strip()[1:-1].strip()
    hist: dict[str, int] = {}
    if inner:
        for item in inner.split(","):
            if item.strip():
                bucket, count = item.split(":")
                hist[bucket.strip()] = int(count)
    return hist


def _parse_job_counter(body: str) -> dict:
    counter: dict = {
        "samples": 0,
        "unit": "",
        "min": None,
        "max": None,
        "sum": None,
        "sumsq": None,
    }
    for key, value in _JOB_FIELD_RE.findall(body):
        if key == "hist":
            counter["hist"] = _parse_hist(value)
        elif key == "unit":
            counter["unit"] = value.strip()
        else:
            counter[key] = int(value)
    return counter


def parse_job_stats(text: str) -> list[dict]:
    """Parse an OST or MDT `job_stats` file.

    Returns one dict per job: ``{"job_id": str, "snapshot_time": float, "start_time":
    float|None, "elapsed_time": float|None, "counters": {name: {"samples", "unit", "min",
    "max", "sum", "sumsq"[, "hist"]}}}``, in file order. Counter names are Lustre's own.
    Mind the units: from 2.14 the OST `read:`/`write:` lines are latencies in usecs and the
    bytes are in `read_bytes:`/`write_bytes:`; in 2.3-2.5 `read:`/`write:` were bytes (see
    `job_bytes`). A block with an empty `job_id:` is kept with job_id "".
    """
    jobs: list[dict] = []
    current: dict | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped == "job_stats:":
            continue
        job_line = _JOB_ID_RE.match(line)
        if job_line:
            current = {
                "job_id": _unquote_job_id(job_line.group(1)),
                "snapshot_time": None,
                "start_time": None,
                "elapsed_time": None,
                "counters": {},
            }
            jobs.append(current)
            continue
        if current is None:
            raise ParseError(f"line before the first job_id: {line!r}")
        header = _HEADER_RE.match(line)
        if header:
            current[header.group(1)] = _parse_time(header.group(2), header.group(3))
            continue
        counter_line = _JOB_COUNTER_RE.match(line)
        if not counter_line:
            raise ParseError(f"not a job_stats line: {line!r}")
        current["counters"][counter_line.group(1)] = _parse_job_counter(counter_line.group(2))
    return jobs


def job_bytes(job: dict) -> tuple[int, int]:
    """(read bytes, write bytes) of one parsed OST job, whatever the Lustre version."""
    totals = []
    for op in ("read", "write"):
        counter = job["counters"].get(f"{op}_bytes")
        if counter is None:
            legacy = job["counters"].get(op)
            counter = legacy if legacy and legacy["unit"] == "bytes" else None
        totals.append((counter["sum"] or 0) if counter else 0)
    return totals[0], totals[1]


# ---------------------------------------------------------------------------------------------
# brw_stats


BRW_SECTIONS = {
    "pages per bulk r/w": "pages_per_bulk_rw",
    "discontiguous pages": "discontiguous_pages",
    "discontiguous blocks": "discontiguous_blocks",
    "disk fragmented I/Os": "disk_fragmented_ios",
    "disk I/Os in flight": "disk_ios_in_flight",
    "I/O time (1/1000s)": "io_time",
    "disk I/O size": "disk_io_size",
    "block maps msec": "block_maps_msec",
}

_BRW_TITLE_RE = re.compile(r"^(\S.*?)\s+(rpcs|ios|maps)\s+% cum % \|")
_BRW_ROW_RE = re.compile(r"^(\w+):\s+(\d+)\s+(\d+)\s+(\d+)\s+\|\s+(\d+)\s+(\d+)\s+(\d+)\s*$")


def parse_brw_stats(text: str) -> dict:
    """Parse a `brw_stats` file (osd-ldiskfs, osd-zfs, or obdfilter before 2.4).

    Returns ``{"snapshot_time", "start_time", "elapsed_time", "sections": {section:
    {bucket: {"read_ios", "read_percent", "read_cum_percent", "write_ios", "write_percent",
    "write_cum_percent"}}}}``. Section keys are the names of DESIGN §6 (`pages_per_bulk_rw`,
    `discontiguous_pages`, ..., `disk_io_size`, `block_maps_msec`), buckets are kept as printed
    (`1`, `128`, `1K`, `4M`). A section printed with no rows is present and empty.
    """
    result: dict = {"snapshot_time": None, "start_time": None, "elapsed_time": None}
    sections: dict[str, dict] = {}
    current: dict | None = None
    for line in text.splitlines():
        if not line.strip() or line.strip().startswith("read "):
            continue
        header = _HEADER_RE.match(line)
        if header:
            result[header.group(1)] = _parse_time(header.group(2), header.group(3))
            continue
        title = _BRW_TITLE_RE.match(line)
        if title:
            name = title.group(1).strip()
            key = BRW_SECTIONS.get(name, re.sub(r"\W+", "_", name).strip("_").lower())
            current = sections.setdefault(key, {})
            continue
        row = _BRW_ROW_RE.match(line)
        if not row or current is None:
            raise ParseError(f"not a brw_stats line: {line!r}")
        bucket, r, rp, rc, w, wp, wc = row.groups()
        current[bucket] = {
            "read_ios": int(r),
            "read_percent": int(rp),
            "read_cum_percent": int(rc),
            "write_ios": int(w),
            "write_percent": int(wp),
            "write_cum_percent": int(wc),
        }
    result["sections"] = sections
    return result


# ---------------------------------------------------------------------------------------------
# single values, health, recovery


def parse_single_value(text: str) -> int | str:
    """`kbytestotal`, `filesfree`, `num_exports`, `eviction_count`, ...: one integer. Returns
    the stripped text when it is not an integer (`version` is `2.15.4_1.llnl`)."""
    value = text.strip()
    try:
        return int(value)
    except ValueError:
        return value


def parse_health_check(text: str) -> dict:
    """`healthy`, `NOT HEALTHY` (possibly after `device X reported unhealthy` lines), `LBUG`.

    Returns ``{"healthy": bool, "status": str, "unhealthy_devices": [str]}``.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    devices = []
    for line in lines:
        match = re.match(r"^device (\S+) reported unhealthy$", line)
        if match:
            devices.append(match.group(1))
    status = lines[-1] if lines else ""
    return {"healthy": status == "healthy", "status": status, "unhealthy_devices": devices}


def parse_recovery_status(text: str) -> dict:
    """`key: value` lines of `obdfilter.*.recovery_status` / `mdt.*.recovery_status`.

    Integers become ints; `completed_clients: 4/8`-style values stay strings (use
    `int(v.split('/')[0])`); everything else is kept as printed (`status: COMPLETE`).
    """
    status: dict = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        status[key.strip()] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return status


# ---------------------------------------------------------------------------------------------
# LNet


LNET_STATS_FIELDS = (
    "msgs_alloc",
    "msgs_max",
    "errors",
    "send_count",
    "recv_count",
    "route_count",
    "drop_count",
    "send_length",
    "recv_length",
    "route_length",
    "drop_length",
)


def parse_lnet_stats(text: str) -> dict[str, int]:
    """The one line of 11 integers in `/sys/kernel/debug/lnet/stats` (lengths in bytes)."""
    values = text.split()
    if len(values) != len(LNET_STATS_FIELDS):
        raise ParseError(f"expected {len(LNET_STATS_FIELDS)} numbers, got {len(values)}")
    return dict(zip(LNET_STATS_FIELDS, (int(v) for v in values), strict=True))


def parse_lnet_table(text: str) -> list[dict[str, str]]:
    """`lctl get_param peers` / `nis` style tables: a header row, then one row per entry.

    A column name that repeats (`min` in peers) is prefixed by the column before it
    (`rtr_min`, `tx_min`), so no value is lost. Values are kept as strings (`~rtr`, `up`).
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0].split()
    names: list[str] = []
    for i, name in enumerate(header):
        names.append(f"{header[i - 1]}_{name}" if header.count(name) > 1 and i else name)
    return [dict(zip(names, line.split(), strict=False)) for line in lines[1:]]


# ---------------------------------------------------------------------------------------------
# lctl get_param output


_PARAM_LINE_RE = re.compile(r"^([A-Za-z][\w-]*(?:\.[^\s=]+)*)=(.*)$")


def parse_lctl_get_param(text: str) -> list[tuple[str, str]]:
    """Split the output of `lctl get_param p1 p2 ...` into (parameter, value) pairs.

    One-line values are printed `name=value`; longer ones `name=` and the value on the
    following lines. Value lines never start with a dotted name followed by `=`.
    """
    params: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        match = _PARAM_LINE_RE.match(line)
        if match:
            first = match.group(2)
            params.append((match.group(1), [first] if first else []))
        elif params:
            params[-1][1].append(line)
        elif line.strip():
            raise ParseError(f"value line before any parameter: {line!r}")
    return [(name, "\n".join(lines) + ("\n" if lines else "")) for name, lines in params]


# ---------------------------------------------------------------------------------------------
# lnetctl (YAML output) without a YAML library


def _scalar(value: str) -> int | str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def parse_yaml_block(text: str):
    """The block-style YAML subset that `lnetctl ... show` prints: nested mappings, `- `
    sequences and plain scalars (integers become ints). Enough for lnetctl; not a YAML parser.
    """
    lines = [
        (len(line) - len(line.lstrip(" ")), line.strip())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    value, _ = _yaml_node(lines, 0, lines[0][0] if lines else 0)
    return value


def _yaml_node(lines, pos, indent):
    if pos >= len(lines):
        return None, pos
    if lines[pos][1].startswith("- "):
        items = []
        while pos < len(lines) and lines[pos][0] == indent and lines[pos][1].startswith("- "):
            # The item's content is the text after "- ", indented two more.
            col, text = lines[pos]
            rest = [(col + 2, text[2:])]
            sub = rest + lines[pos + 1 :]
            item, used = _yaml_node(sub, 0, col + 2)
            items.append(item)
            pos = pos + used
        return items, pos
    mapping: dict = {}
    while pos < len(lines) and lines[pos][0] == indent and not lines[pos][1].startswith("- "):
        key, _, rest = lines[pos][1].partition(":")
        pos += 1
        if rest.strip():
            mapping[key.strip()] = _scalar(rest)
        elif pos < len(lines) and (
            lines[pos][0] > indent or (lines[pos][0] == indent and lines[pos][1].startswith("- "))
        ):
            mapping[key.strip()], pos = _yaml_node(lines, pos, lines[pos][0])
        else:
            mapping[key.strip()] = None
    return mapping, pos


# ---------------------------------------------------------------------------------------------
# obdfilter-survey


_SURVEY_PREFIX_RE = re.compile(
    r"^ost\s+(\d+)\s+sz\s+(\d+)K\s+rsz\s+(\d+)K?\s+obj\s+(\d+)\s+thr\s+(\d+)\s*(.*)$"
)
_SURVEY_TEST_RE = re.compile(
    r"(\w+)\s+(\d+\.\d+)\s+(?:\[\s*(\d+\.\d+),\s*(\d+\.\d+)\]|(ERROR|SHORT))"
)


def parse_obdfilter_survey(text: str) -> dict:
    """Parse obdfilter-survey's summary (stdout or the `.summary` file).

    Returns ``{"header": str|None, "rows": [{"ost", "size_kib", "rsz_kib", "obj", "thr",
    "tests": {name: {"mb_s": float, "min": float|None, "max": float|None, "flag":
    None|"ERROR"|"SHORT"}}, "note": str}]}``. Both bracket styles (`[ 601.97,2912.91]` and
    `[ 601.97, 2912.91]`) are accepted; lines that are not results are ignored, except the
    header line (`... Obdfilter-survey for case=disk from host`).
    """
    header = None
    rows = []
    for line in text.splitlines():
        if "Obdfilter-survey for case=" in line:
            header = line.strip()
            continue
        match = _SURVEY_PREFIX_RE.match(line.strip())
        if not match:
            continue
        ost, size, rsz, obj, thr, rest = match.groups()
        tests = {}
        end = 0
        for test in _SURVEY_TEST_RE.finditer(rest):
            name, bandwidth, low, high, flag = test.groups()
            tests[name] = {
                "mb_s": float(bandwidth),
                "min": float(low) if low else None,
                "max": float(high) if high else None,
                "flag": flag,
            }
            end = test.end()
        rows.append(
            {
                "ost": int(ost),
                "size_kib": int(size),
                "rsz_kib": int(rsz),
                "obj": int(obj),
                "thr": int(thr),
                "tests": tests,
                "note": rest[end:].strip(),
            }
        )
    return {"header": header, "rows": rows}
