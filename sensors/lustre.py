"""Collectors of the Lustre targets and services of one server: OSTs (`ost`, `ost_job`, `brw`),
MDTs (`mdt`, `mdt_job`, `brw`), the OSS request services (`oss_service`) and each target's
clients (`ost_client`, `mdt_client`: the per-export stats).

Counters are written as the cumulative values the kernel prints. Field names keep Lustre's
counter names with the conventions of NAMING.md (see `counter_fields`), the same for every
release from 2.10 to 2.16, so a dashboard query does not care which release a server runs.
"""

from __future__ import annotations

from sensors import schema
from sensors.brw import read_brw_rows
from sensors.jobstats import JobStatsReader
from sensors.layout import LustreTree, read_text
from sensors.lineproto import escape_key, series
from sensors.parsers import (
    parse_recovery_status,
    parse_single_value,
    parse_stats,
)
from sensors.rounds import Round

_TIME_UNITS = {"usecs": "_usecs", "usec": "_usecs", "secs": "_secs", "sec": "_secs"}


def counter_fields(counters: dict[str, dict], fields: dict) -> dict:
    """Fields of one parsed stats file or job_stats block, added to `fields`.

    - a `[bytes]` counter `X_bytes` (or the 2.3-2.5 job counters `read`/`write` in bytes):
      `X_bytes` = its sum, `X_calls` = its sample count;
    - a latency counter (`[usecs]`, or `[usec]` in the ptlrpc services up to 2.15):
      `X` = its sample count, `X_usecs` = its sum. The 2.14+ `read`/`write` latencies only
      give `read_usecs`/`write_usecs`: their count is `read_calls`/`write_calls` already;
    - `[secs]`/`[sec]`: `X` and `X_secs`; any other unit (`reqs`, `bufs`, ...): `X` = samples,
      and `X_sum` = the sum when the line carries one (`req_active`, `req_qdepth`).
    """
    for name, counter in counters.items():
        unit = counter["unit"]
        samples = counter["samples"]
        total = counter["sum"]
        if unit == "bytes":
            base = name[:-6] if name.endswith("_bytes") else name
            fields[f"{base}_calls"] = samples
            if total is not None:
                fields[f"{base}_bytes"] = total
            continue
        suffix = _TIME_UNITS.get(unit)
        if suffix is None:
            fields[name] = samples
            if total is not None:
                fields[f"{name}_sum"] = total
            continue
        if suffix != "_usecs" or name not in ("read", "write"):
            fields[name] = samples
        if total is not None:
            fields[f"{name}{suffix}"] = total
    return fields


def recovery_fields(status: dict, fields: dict) -> None:
    if "status" in status:
        fields["recovery_status"] = str(status["status"])
    for key, name in (
        ("completed_clients", "recovery_completed_clients"),
        ("connected_clients", "recovery_connected_clients"),
        ("time_remaining", "recovery_time_remaining"),
        ("recovery_duration", "recovery_duration"),
    ):
        value = status.get(key)
        if isinstance(value, str):
            value = value.partition("/")[0].strip()
            value = int(value) if value.isdigit() else None
        if isinstance(value, int):
            fields[name] = value


def _values(rnd: Round, files: list[dict[str, str]], names: dict[str, str], fields: dict) -> None:
    for filename, field in names.items():
        for found in files:
            path = found.get(filename)
            if path is None:
                continue
            value = rnd.parse(path, parse_single_value)
            if isinstance(value, int):
                fields[field] = value
            elif value is not None:
                rnd.problem(path, f"not an integer: {value!r}")
            break


def _brw_points(rnd: Round, tail: str, path: str) -> None:
    text = _read(rnd, path)
    if text is None:
        return
    try:
        sections = read_brw_rows(text, schema.BRW_SECTIONS)
    except Exception as error:  # the reference parser refused it: skip this file only
        rnd.problem(path, error)
        return
    lines = rnd.lines
    timestamp = rnd.timestamp
    for section in schema.BRW_SECTIONS:
        for bucket, read_ios, write_ios in sections.get(section, ()):
            if not bucket.isalnum():  # buckets are `128`, `4K`, `1M`: nothing to escape
                bucket = escape_key(bucket)
            lines.append(
                f"brw{tail},section={section},bucket={bucket} "
                f"read_ios={read_ios}i,write_ios={write_ios}i {timestamp}"
            )


def _read(rnd: Round, path: str) -> str | None:
    try:
        return read_text(path)
    except FileNotFoundError:
        return None  # went away since the listing (a target unmounted)
    except OSError as error:
        rnd.problem(path, error)
        return None


def _job_points(rnd: Round, jobs: JobStatsReader, kind: str, tail: str, path: str) -> None:
    text = _read(rnd, path)
    if text is None:
        return
    try:
        found = jobs.read(path, text, ost=kind == "ost")
    except Exception as error:  # the reference parser refused it: skip this file only
        rnd.problem(path, error)
        return
    measurement = f"{kind}_job{tail},jobid="
    timestamp = rnd.timestamp
    rnd.lines.extend(
        f"{measurement}{escape_key(job_id)} {fields} {timestamp}" for job_id, fields in found
    )


def collect_targets(tree: LustreTree, rnd: Round, kind: str, jobs: JobStatsReader) -> int:
    """All OSTs (`kind="ost"`) or MDTs (`kind="mdt"`) of the server. Returns how many.

    Tags are encoded once per target (`tail`); the `brw` and `*_job` points append theirs.
    """
    obd_type = "obdfilter" if kind == "ost" else "mdt"
    stats_file = "stats" if kind == "ost" else "md_stats"
    osd_dirs = tree.device_dirs(tree.osd_types())
    count = 0
    for device, directories in sorted(tree.device_dirs([obd_type]).items()):
        ident = schema.split_device(device)
        if ident is None:
            continue
        count += 1
        fs, target = ident
        tags = {schema.FS: fs, schema.TARGET: target}
        own = tree.device_files(directories)
        osd = tree.device_files(osd_dirs[device]) if device in osd_dirs else {}
        fields: dict = {}
        if stats_file in own:
            stats = rnd.parse(own[stats_file], parse_stats)
            if stats is not None:
                counter_fields(stats["counters"], fields)
        _values(rnd, [own, osd], schema.CAPACITY_FILES, fields)
        _values(rnd, [own], schema.TARGET_VALUE_FILES, fields)
        if "recovery_status" in own:
            status = rnd.parse(own["recovery_status"], parse_recovery_status)
            if status is not None:
                recovery_fields(status, fields)
        tail = series("", {**rnd.tags, **tags})
        rnd.add_series(f"{kind}{tail}", fields)

        brw_path = osd.get("brw_stats") or own.get("brw_stats")
        if brw_path:
            _brw_points(rnd, tail, brw_path)
        if "job_stats" in own:
            _job_points(rnd, jobs, kind, tail, own["job_stats"])
    return count


def collect_oss_services(tree: LustreTree, rnd: Round) -> None:
    """`ost.OSS.<service>.stats`: request wait times, queue depth, active requests, ..."""
    for service, directories in sorted(tree.device_dirs(["ost/OSS"]).items()):
        files = tree.device_files(directories)
        if "stats" not in files:
            continue
        stats = rnd.parse(files["stats"], parse_stats)
        if stats is not None:
            rnd.add(
                schema.OSS_SERVICE.name,
                {schema.SERVICE: service},
                counter_fields(stats["counters"], {}),
            )


class ExportsReader:
    """Per-client stats of every target: `obdfilter.<target>.exports.<nid>.stats` as
    `ost_client`, `mdt.<target>.exports.<nid>.stats` as `mdt_client`, the fields named as the
    target's own (`read_bytes`, `write_calls`, `open`, `getattr_usecs`, ...).

    Every client has an export on every target, and most of them are idle at any moment (2,000
    clients of 2,400 OSTs would be 4.8 million points a read): an export whose counters have not
    moved since the last read is not written again. When it moves again, its unchanged point is
    written first at the time of the last read, then the new one: a window that starts while
    it was idle still sees its first increment, as if every read had been written. The first
    read (and `collect --once`) writes every export."""

    def __init__(self) -> None:
        # Each export's series and fields at the last read, and that read's timestamp.
        self.last: dict[str, dict] = {}
        self.moved: set[str] = set()  # the exports written at the last read
        self.last_timestamp: int | None = None

    def collect(self, tree: LustreTree, rnd: Round) -> None:
        seen: dict[str, dict] = {}
        for kind, obd_type in (("ost", "obdfilter"), ("mdt", "mdt")):
            measurement = schema.CLIENT_MEASUREMENTS[kind].name
            for device in sorted(tree.device_dirs([obd_type])):
                ident = schema.split_device(device)
                if ident is None:
                    continue
                fs, target = ident
                tags = {**rnd.tags, schema.FS: fs, schema.TARGET: target}
                clients = tree.device_dirs([f"{obd_type}/{device}/exports"])
                for nid, directories in sorted(clients.items()):
                    files = tree.device_files(directories)
                    if "stats" not in files:
                        continue
                    stats = rnd.parse(files["stats"], parse_stats)
                    if stats is not None:
                        prefix = series(measurement, {**tags, schema.CLIENT: nid})
                        seen[prefix] = counter_fields(stats["counters"], {})
        moved = set()
        for prefix, fields in seen.items():
            before = self.last.get(prefix)
            if before == fields:
                continue
            if before is not None and prefix not in self.moved and self.last_timestamp:
                rnd.add_series_at(prefix, before, self.last_timestamp)
            rnd.add_series(prefix, fields)
            moved.add(prefix)
        self.last, self.moved, self.last_timestamp = seen, moved, rnd.timestamp
