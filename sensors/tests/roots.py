"""Server roots built from the real Lustre samples, with each file where a given release keeps
it (`sensors.sample_trees.place`), so the collectors are tested on the layouts of 2.10, 2.12,
2.14 and 2.15 alike.
"""

from __future__ import annotations

from pathlib import Path

from sensors.parsers import parse_lctl_get_param
from sensors.sample_trees import place
from sensors.tests import fixture_text

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
