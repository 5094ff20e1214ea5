"""Server trees in the layout of a given Lustre release, built from the real samples: the
tests' roots (sensors/tests/roots.py) and the sensor benchmark's 2.15 tree.

`place(root, param, text, release)` puts the value of one `lctl get_param` parameter where that
release has it (procfs, sysfs or debugfs); `place_lctl_output` does it for every parameter of a
recorded `lctl get_param` output. `sample_text` reads the real Lustre samples kept under
sensors/tests/fixtures/lustre/ (sources and licences in its SOURCES.md); they ship with the
source tree, not with an installed sensor.
"""

from __future__ import annotations

import re
from pathlib import Path

from sensors.parsers import parse_lctl_get_param

SAMPLES = Path(__file__).resolve().parent / "tests" / "fixtures" / "lustre"


def sample_text(relative: str) -> str:
    return (SAMPLES / relative).read_text(encoding="utf-8")


PROC = "proc/fs/lustre"
SYSFS = "sys/fs/lustre"
DEBUGFS = "sys/kernel/debug/lustre"

_SYSFS_VALUES = re.compile(r"^(kbytes\w+|files\w+|num_exports|tot_\w+|eviction_count)$")
# `obdfilter.<target>.exports.<nid>.stats`: a NID holds dots (`192.168.0.100@o2ib`).
_EXPORT_STATS = re.compile(r"^(obdfilter|mdt)\.([^.]+)\.exports\.([^/]+)\.stats$")
_QUOTA_FILE = re.compile(r"^(osd-\w+)\.([^.]+)\.quota_slave\.(acct_(?:user|group|project))$")
_QUOTA_MASTER = re.compile(r"^qmt\.([^.]+)\.((?:dt|md)-[^.]+)\.(glb-(?:usr|grp|prj))$")


def _release(release: str) -> tuple[int, int]:
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


def param_path(param: str, release: str) -> str | None:
    """Relative path of an `lctl get_param` parameter on a server of `release`, or None for
    parameters the sensor does not read."""
    version = _release(release)
    if param == "health_check":
        return f"{SYSFS}/health_check" if version >= (2, 10) else f"{PROC}/health_check"
    if param == "lnet.stats":
        return "proc/sys/lnet/stats" if version <= (2, 10) else "sys/kernel/debug/lnet/stats"
    for pattern, layout in (
        (_EXPORT_STATS, "{0}/{1}/exports/{2}/stats"),
        (_QUOTA_FILE, "{0}/{1}/quota_slave/{2}"),
        (_QUOTA_MASTER, "qmt/{0}/{1}/{2}"),
    ):
        found = pattern.match(param)
        if found:  # procfs in every release
            return f"{PROC}/" + layout.format(*found.groups())
    parts = param.split(".")
    if parts[0] == "ost" and len(parts) == 4 and parts[1] == "OSS" and parts[3] == "stats":
        base = PROC if version <= (2, 10) else DEBUGFS
        return f"{base}/ost/OSS/{parts[2]}/stats"
    if len(parts) != 3:
        return None  # exports.<nid>.uuid, ldlm namespaces, ...
    obd_type, device, name = parts
    if obd_type in ("obdfilter", "mdt") and name in (
        "stats",
        "md_stats",
        "job_stats",
        "recovery_status",
    ):
        return f"{PROC}/{obd_type}/{device}/{name}"
    if obd_type in ("obdfilter", "mdt") or obd_type.startswith("osd-"):
        if _SYSFS_VALUES.match(name):
            base = PROC if version <= (2, 10) else SYSFS
            return f"{base}/{obd_type}/{device}/{name}"
    if obd_type == "obdfilter" and name == "brw_stats":  # up to 2.3, and a symlink later
        return f"{PROC}/obdfilter/{device}/brw_stats"
    if obd_type.startswith("osd-") and name == "brw_stats":
        base = DEBUGFS if version >= (2, 15) else PROC
        return f"{base}/{obd_type}/{device}/brw_stats"
    return None


def place(root: Path, param: str, text: str, release: str) -> Path | None:
    relative = param_path(param, release)
    if relative is None:
        return None
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def place_lctl_output(root: Path, text: str, release: str) -> list[str]:
    """Every parameter of a recorded `lctl get_param` output; returns those placed."""
    placed = []
    for param, value in parse_lctl_get_param(text):
        if place(root, param, value, release) is not None:
            placed.append(param)
    return placed
