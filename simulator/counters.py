"""Kernel-style counters and their text, as Lustre 2.15 prints them.

A counter is a list `[samples, min, max, sum, sumsq]` (min is -1 until the first sample), the
shape of `struct lprocfs_counter`. Counters only grow; the kernel keeps sumsq in 64 bits, so it
is printed modulo 2**64 as the kernel would wrap it. Histograms (brw_stats) are 32 buckets per
direction, like `struct obd_histogram`.

The format functions reproduce the printf formats of lustre-release v2_15_4
(`lprocfs_stats_seq_show`, `lprocfs_jobstats_seq_show`, `brw_stats_seq_show`,
`lprocfs_stats_header`); the tests compare them with the real 2.15 samples through the same
parser.
"""

from __future__ import annotations

U64 = 1 << 64

# obdfilter stats and OST job_stats counters in 2.15 (ofd_stats_counter_init): name, unit.
OST_COUNTERS = (
    ("read_bytes", "bytes"),
    ("write_bytes", "bytes"),
    ("read", "usecs"),
    ("write", "usecs"),
    ("getattr", "usecs"),
    ("setattr", "usecs"),
    ("punch", "usecs"),
    ("sync", "usecs"),
    ("destroy", "usecs"),
    ("create", "usecs"),
    ("statfs", "usecs"),
    ("get_info", "usecs"),
    ("set_info", "usecs"),
    ("quotactl", "usecs"),
    ("prealloc", "usecs"),
)
# md_stats and MDT job_stats counters in 2.15 (mdt_stats[]).
MDT_COUNTERS = tuple(
    (name, "bytes" if name.endswith("_bytes") else "usecs")
    for name in (
        "open",
        "close",
        "mknod",
        "link",
        "unlink",
        "mkdir",
        "rmdir",
        "rename",
        "getattr",
        "setattr",
        "getxattr",
        "setxattr",
        "statfs",
        "sync",
        "samedir_rename",
        "crossdir_rename",
        "read_bytes",
        "write_bytes",
        "read",
        "write",
        "punch",
        "migrate",
        "fallocate",
    )
)
# ptlrpc service counters (ptlrpc_ldebugfs_register): generic ones, then per-opcode ones.
SERVICE_GENERIC = (
    ("req_waittime", "usec"),
    ("req_qdepth", "reqs"),
    ("req_active", "reqs"),
    ("req_timeout", "sec"),
    ("reqbuf_avail", "bufs"),
)
OSS_SERVICES = {
    "ost": (
        ("ost_create", "usec"),
        ("ost_destroy", "usec"),
        ("ost_get_info", "usec"),
        ("ost_connect", "usec"),
        ("ost_set_info", "usec"),
        ("obd_ping", "usec"),
    ),
    "ost_io": (("ost_read", "usec"), ("ost_write", "usec"), ("ost_punch", "usec")),
    "ost_create": (("ost_statfs", "usec"),),
}
MDS_SERVICES = {
    "mdt": (
        ("ldlm_ibits_enqueue", "reqs"),
        ("mds_getattr", "usec"),
        ("mds_close", "usec"),
        ("mds_reint_open", "reqs"),
        ("mds_reint_create", "reqs"),
        ("mds_reint_unlink", "reqs"),
        ("mds_reint_setattr", "reqs"),
        ("mds_statfs", "usec"),
        ("mds_connect", "usec"),
        ("obd_ping", "usec"),
    ),
}

BRW_SECTIONS = (
    ("pages per bulk r/w", "rpcs", True),
    ("discontiguous pages", "rpcs", False),
    ("discontiguous blocks", "rpcs", False),
    ("disk fragmented I/Os", "ios", False),
    ("disk I/Os in flight", "ios", False),
    ("I/O time (1/1000s)", "ios", True),
    ("disk I/O size", "ios", True),
    ("block maps msec", "maps", True),
)
BRW_PAGES, BRW_DISCONT_PAGES, BRW_DISCONT_BLOCKS, BRW_FRAGS, BRW_INFLIGHT, BRW_TIME, BRW_SIZE = (
    range(7)
)
HIST_BUCKETS = 32


def new_counter() -> list[int]:
    return [0, -1, 0, 0, 0]


def new_counters(names) -> dict[str, list[int]]:
    return {name: new_counter() for name, _unit in names}


def add_samples(counter: list[int], n: int, low: int, high: int, total: int, sumsq: int) -> None:
    """n samples whose smallest is `low`, largest `high`, sum `total`, sum of squares `sumsq`."""
    if n <= 0:
        return
    counter[0] += n
    if counter[1] < 0 or low < counter[1]:
        counter[1] = low
    if high > counter[2]:
        counter[2] = high
    counter[3] += total
    counter[4] += sumsq


def add_same(counter: list[int], n: int, value: int) -> None:
    """n samples of the same value (bulk I/O of one size)."""
    add_samples(counter, n, value, value, n * value, n * value * value)


def add_spread(counter: list[int], n: int, mean: float) -> None:
    """n latency samples around `mean` (min mean/3, max 4 x mean, sumsq for a 50 % spread;
    fewer than 4 samples all take the mean, so min <= sum/n <= max always holds)."""
    if n <= 0:
        return
    mean = max(1.0, mean)
    if n < 4:
        value = int(mean)
        add_samples(counter, n, value, value, n * value, n * value * value)
        return
    low = max(1, int(mean / 3))
    high = max(low, int(mean * 4))
    total = int(n * mean)
    add_samples(counter, n, low, high, total, int(n * mean * mean * 1.25))


def new_histograms() -> list[list[int]]:
    """brw_stats: 8 sections x (read, write) x 32 buckets."""
    return [[0] * HIST_BUCKETS for _ in range(len(BRW_SECTIONS) * 2)]


def log2_bucket(value: float) -> int:
    if value < 1:
        return 0
    return min(HIST_BUCKETS - 1, int(value).bit_length() - 1)


# ---------------------------------------------------------------------------------------------
# text


def format_time(t: float) -> str:
    secs = int(t)
    nsecs = int(round((t - secs) * 1e9))
    if nsecs >= 1_000_000_000:
        secs, nsecs = secs + 1, nsecs - 1_000_000_000
    return f"{secs}.{nsecs:09d}"


def stats_header(now: float, start: float, width: int, colon: bool, prefix: str = "") -> str:
    """lprocfs_stats_header(): snapshot_time, start_time, elapsed_time."""
    suffix = ":" if colon else ""
    lines = []
    for field, value in (
        ("snapshot_time", now),
        ("start_time", start),
        ("elapsed_time", max(0.0, now - start)),
    ):
        lines.append(f"{prefix}{field + suffix:<{width}} {format_time(value)} secs.nsecs\n")
    return "".join(lines)


def format_stats(now: float, start: float, counters: dict, units) -> str:
    """A generic stats file: header, then only the counters that have samples."""
    parts = [stats_header(now, start, 25, colon=False)]
    for name, unit in units:
        counter = counters.get(name)
        if not counter or counter[0] == 0:
            continue
        samples, low, high, total, sumsq = counter
        parts.append(f"{name:<25} {samples} samples [{unit}] {low} {high} {total} {sumsq % U64}\n")
    return "".join(parts)


def quote_job_id(job_id: str) -> str:
    """2.15.4 quotes a job id holding anything but [A-Za-z0-9.@_-] and escapes it as \\xHH."""
    if all(c.isalnum() or c in ".@-_" for c in job_id):
        return job_id
    escaped = "".join(c if c.isalnum() or c in ".@-_" else f"\\x{ord(c):02X}" for c in job_id)
    return f'"{escaped}"'


_JOB_LINE_CACHE: dict[tuple, tuple[tuple[str, str, str], ...]] = {}


def _job_lines(units) -> tuple[tuple[str, str, str], ...]:
    """Per counter: (name, line prefix `  <name>:<pad> { samples: `, the whole line of a
    counter with no samples), computed once per counter set."""
    key = tuple(units)
    lines = _JOB_LINE_CACHE.get(key)
    if lines is None:
        lines = []
        for name, unit in units:
            prefix = f"  {name}:{' ' * (15 - min(len(name), 15))} {{ samples: "
            zero = (
                f"{prefix}{0:11d}, unit: {unit:>5}, min: {0:8d}, max: {0:8d}, "
                f"sum: {0:16d}, sumsq: {0:18d} }}\n"
            )
            lines.append(
                (
                    name,
                    f"{prefix}%11d, unit: {unit:>5}, min: %8d, max: %8d, "
                    f"sum: %16d, sumsq: %18d }}\n",
                    zero,
                )
            )
        lines = tuple(lines)
        _JOB_LINE_CACHE[key] = lines
    return lines


def format_job(job_id: str, job: dict, units) -> str:
    """One job's block of a job_stats file (lprocfs_jobstats_seq_show in 2.15.4)."""
    parts = [
        f"- {'job_id:':<16} {quote_job_id(job_id)}\n",
        stats_header(job["last"], job["start"], 16, colon=True, prefix="  "),
    ]
    counters = job["c"]
    for name, template, zero in _job_lines(units):
        counter = counters.get(name)
        if counter is None or counter[0] == 0:
            parts.append(zero)
        else:
            samples, low, high, total, sumsq = counter
            parts.append(template % (samples, low, high, total, sumsq % U64))
    return "".join(parts)


def format_job_stats(jobs: dict, units, cache: dict | None = None, key: str = "") -> str:
    """`job_stats` of one target: jobs in the order they were first seen. A job's block only
    changes when the job did something (its `last` time moves), so a long-running process can
    pass a `cache` dict to keep each block's text until then."""
    if not jobs:
        return "job_stats:\n"
    parts = ["job_stats:\n"]
    for job_id, job in jobs.items():
        if cache is None:
            parts.append(format_job(job_id, job, units))
            continue
        cached = cache.get((key, job_id))
        if cached is None or cached[0] != job["last"] or cached[1] != job["start"]:
            cached = (job["last"], job["start"], format_job(job_id, job, units))
            cache[(key, job_id)] = cached
        parts.append(cached[2])
    return "".join(parts)


def _bucket_label(index: int, scaled: bool) -> str:
    if not scaled:
        return str(index)
    if index < 10:
        return str(1 << index)
    if index < 20:
        return f"{1 << (index - 10)}K"
    return f"{1 << (index - 20)}M"


_SECTION_HEADS = tuple(
    f"\n{' ':>26} read      |     write\n{name:<22} {units:<5} % cum % |  {units:<11} % cum %\n"
    for name, units, _scaled in BRW_SECTIONS
)


def _labels(scaled: bool) -> tuple[str, ...]:
    return tuple(f"{_bucket_label(i, scaled)}:\t\t" for i in range(HIST_BUCKETS))


_SECTION_LABELS = tuple(_labels(scaled) for _name, _units, scaled in BRW_SECTIONS)


def format_brw_stats(now: float, start: float, histograms: list[list[int]]) -> str:
    parts = [stats_header(now, start, 25, colon=True)]
    for number, head in enumerate(_SECTION_HEADS):
        parts.append(head)
        read = histograms[number * 2]
        write = histograms[number * 2 + 1]
        read_total = sum(read)
        write_total = sum(write)
        if not read_total and not write_total:
            continue
        labels = _SECTION_LABELS[number]
        read_cum = write_cum = 0
        for i in range(HIST_BUCKETS):
            r = read[i]
            w = write[i]
            read_cum += r
            write_cum += w
            if not read_cum and not write_cum:
                continue
            parts.append(
                f"{labels[i]}{r:10d} {r * 100 // read_total if read_total else 0:3d} "
                f"{read_cum * 100 // read_total if read_total else 0:3d}   | {w:4d} "
                f"{w * 100 // write_total if write_total else 0:3d} "
                f"{write_cum * 100 // write_total if write_total else 0:3d}\n"
            )
            if read_cum == read_total and write_cum == write_total:
                break
    return "".join(parts)
