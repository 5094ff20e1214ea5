"""Server roots built from the real Lustre samples, with each file where a given release keeps
it, so the collectors are tested on the layouts of 2.10, 2.12, 2.14 and 2.15 alike.

`place(root, param, text, release)` puts the value of one `lctl get_param` parameter where that
release has it (procfs, sysfs or debugfs); `place_lctl_output` does it for every parameter of a
recorded `lctl get_param` output.
"""

from __future__ import annotations

import re
from pathlib import Path

from sensors.parsers import parse_lctl_get_param
from sensors.tests import fixture_text

PROC = "proc/fs/lustre"
SYSFS = "sys/fs/lustre"
DEBUGFS = "sys/kernel/debug/lustre"

_SYSFS_VALUES = re.compile(r"^(kbytes\w+|files\w+|num_exports|tot_\w+|eviction_count)$")


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
    parts = param.split(".")
    if parts[0] == "ost" and len(parts) == 4 and parts[1] == "OSS" and parts[3] == "stats":
        base = PROC if version <= (2, 10) else DEBUGFS
        return f"{base}/ost/OSS/{parts[2]}/stats"
    if len(parts) != 3:
        return None  # exports.<nid>.stats, ldlm namespaces, quota, ...
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


HPE = "hpe-lustre_exporter"
LMT = "llnl-lmt"


def _capacity(root: Path, obd_type: str, device: str, release: str) -> None:
    """The 2.10.1 single values of the HPE tree (the format never changed) for one target."""
    for name in ("kbytestotal", "kbytesfree", "kbytesavail", "filestotal", "filesfree"):
        text = fixture_text(f"{HPE}/obdfilter.lustrefs-OST0000.{name}.txt")
        place(root, f"{obd_type}.{device}.{name}", text, release)


def build_release_root(root: Path, release: str) -> Path:
    """A server root with the LLNL production samples of one release in that release's layout
    (2.10.8, 2.12.9 or 2.15.4), plus the HPE single values, OSS service stats and health."""
    if release == "2.15":
        sample, fs, osd = f"{LMT}/2.15.4_1.llnl", "lflood", "osd-zfs"
        for ost in ("OST0000", "OST0001"):
            text = fixture_text(f"{sample}/obdfilter.{fs}-{ost}.stats.txt")
            place(root, f"obdfilter.{fs}-{ost}.stats", text, release)
        brw = fixture_text(f"{sample}/osd-zfs.{fs}-OST0000.brw_stats.txt")
        jobs_file = (
            "whamcloud-lustrefs-exporter/"
            "lctl-get_param.obdfilter-job_stats.exascaler-2.14.0_ddn.quoted-jobid-hist.txt"
        )
        jobs = parse_lctl_get_param(fixture_text(jobs_file))[0][1]
        place(root, f"obdfilter.{fs}-OST0001.job_stats", jobs, release)
    elif release == "2.12":
        sample, fs, osd = f"{LMT}/2.12.9_12.llnl", "lquake", "osd-zfs"
        text = fixture_text(f"{sample}/obdfilter.{fs}-OST0000.stats.txt")
        place(root, f"obdfilter.{fs}-OST0000.stats", text, release)
        brw = fixture_text(f"{sample}/osd-zfs.{fs}-OST0000.brw_stats.txt")
    elif release == "2.10":
        sample, fs, osd = f"{LMT}/2.10.8", "lquake", "osd-ldiskfs"
        text = fixture_text(f"{sample}/obdfilter.{fs}-OST0000.stats.txt")
        place(root, f"obdfilter.{fs}-OST0000.stats", text, release)
        brw = fixture_text(f"{sample}/obdfilter.{fs}-OST0000.brw_stats.ldiskfs.txt")
        job_text = fixture_text(f"{HPE}/obdfilter.lustrefs-OST0000.job_stats.txt")
        place(root, f"obdfilter.{fs}-OST0000.job_stats", job_text, release)
    else:
        raise ValueError(f"no sample set for {release}")
    # 2.10.8's sample was read through the obdfilter symlink, the others in osd-zfs.
    brw_owner = "obdfilter" if release == "2.10" else osd
    place(root, f"{brw_owner}.{fs}-OST0000.brw_stats", brw, release)
    _capacity(root, "obdfilter", f"{fs}-OST0000", release)
    recovery = fixture_text(f"{HPE}/obdfilter.lustrefs-OST0000.recovery_status.txt")
    place(root, f"obdfilter.{fs}-OST0000.recovery_status", recovery, release)
    place(root, "ost.OSS.ost_io.stats", fixture_text(f"{HPE}/ost.OSS.ost_io.stats.txt"), release)
    mdt = f"{fs}-MDT0000"
    place(root, f"mdt.{mdt}.md_stats", fixture_text(f"{sample}/mdt.{mdt}.md_stats.txt"), release)
    _capacity(root, osd, mdt, release)
    place(root, "health_check", fixture_text(f"{HPE}/health_check.txt"), release)
    place(root, "lnet.stats", fixture_text(f"{sample}/lnet.stats.txt"), release)
    return root
