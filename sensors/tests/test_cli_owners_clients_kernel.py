"""The command-line contract covers the owners, the clients and the kernel log:
`python -m sensors collect --root DIR --once --format line` on a server tree in Lustre 2.15's
layout (the paths `lctl get_param` reads) holding `quota_slave/acct_*`, the quota master's
`glb-*`, per-client export stats and a `dev/kmsg` prints their points. The tree is written by
hand in the real formats (the accounting and limits lines as in the 2.14 EXAScaler capture of
the fixtures, the export stats as 2.15 prints them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sensors.tests.lp import one, parse_lines, points_of

REPO = Path(__file__).resolve().parents[2]
BTIME = 1764300000


def limits(hard: int, soft: int, granted: int, time: int) -> str:
    """One owner's limits line as the quota master prints it (`%20llu` each)."""
    values = f"hard: {hard:20}, soft: {soft:20}, granted: {granted:20}, time: {time:20}"
    return f"  limits:  {{ {values} }}"


ACCT_USER_OST = """usr_accounting:
- id:      0
  usage:   { inodes:                  412, kbytes:                 1024 }
- id:      1001
  usage:   { inodes:               180344, kbytes:          96468992000 }
- id:      1002
  usage:   { inodes:                 5120, kbytes:            209715200 }
"""
ACCT_GROUP_OST = """grp_accounting:
- id:      0
  usage:   { inodes:                  412, kbytes:                 1024 }
- id:      500
  usage:   { inodes:               185464, kbytes:          96678707200 }
"""
ACCT_PROJECT_OST = """prj_accounting:
- id:      0
  usage:   { inodes:               185876, kbytes:          96678708224 }
"""
ACCT_USER_MDT = """usr_accounting:
- id:      0
  usage:   { inodes:                 1032, kbytes:                 4128 }
- id:      1001
  usage:   { inodes:               180345, kbytes:               721380 }
"""
GLB_DT_USR = f"""global_pool0_dt_usr
- id:      0
{limits(0, 0, 0, 604800)}
- id:      1001
{limits(107374182400, 96636764160, 96469000192, 1764907200)}
"""
GLB_MD_USR = f"""global_pool0_md_usr
- id:      0
{limits(0, 0, 0, 604800)}
- id:      1001
{limits(1000000, 900000, 180345, 0)}
"""
GLB_DT_GRP = f"""global_pool0_dt_grp
- id:      0
{limits(0, 0, 0, 604800)}
"""
OST_EXPORT = """snapshot_time             1764300590.123456789 secs.nsecs
start_time                1764300100.000000000 secs.nsecs
elapsed_time              490.123456789 secs.nsecs
read_bytes                1024 samples [bytes] 4096 1048576 1073741824 1125899906842624
write_bytes               4096 samples [bytes] 1048576 1048576 4294967296 4503599627370496
read                      1024 samples [usecs] 120 9000 512000 401408000
write                     4096 samples [usecs] 300 12000 4096000 5033164800
statfs                    98 samples [usecs] 2 40 980 12000
"""
MDT_EXPORT = """snapshot_time             1764300590.223456789 secs.nsecs
start_time                1764300100.000000000 secs.nsecs
elapsed_time              490.223456789 secs.nsecs
open                      2048 samples [usecs] 20 3000 102400 10485760
close                     2048 samples [usecs] 5 900 40960 1310720
getattr                   512 samples [usecs] 3 300 5120 102400
"""
KMSG = [
    "6,880,1500000,-;Lustre: Lustre: Build Version: 2.15.4",
    "4,1201,35000000,-;Lustre: scratch-OST0003: Imperative Recovery not enabled, recovery "
    "window 300-900",
    "4,1202,35100000,-;Lustre: scratch-OST0003: in recovery but waiting for the first client "
    "to connect",
    " SUBSYSTEM=lustre",
    "3,1203,512000000,-;LustreError: 137-5: scratch-OST0004_UUID: not available for connect "
    "from 10.0.0.21@o2ib (no target). If you are running an HA pair check that the target is "
    "mounted on the other server.",
    "6,1204,512100000,-;sd 1:0:0:3: [sdd] Synchronizing SCSI cache",
    "3,1205,590000000,-;LNetError: 2862:0:(o2iblnd_cb.c:3402:kiblnd_check_conns()) Timed out "
    "tx for 10.0.0.5@o2ib: 4 seconds",
]


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_tree(root: Path) -> None:
    lustre = "proc/fs/lustre"
    write(root, f"{lustre}/osd-ldiskfs/scratch-OST0003/quota_slave/acct_user", ACCT_USER_OST)
    write(root, f"{lustre}/osd-ldiskfs/scratch-OST0003/quota_slave/acct_group", ACCT_GROUP_OST)
    write(root, f"{lustre}/osd-ldiskfs/scratch-OST0003/quota_slave/acct_project", ACCT_PROJECT_OST)
    # A 2.14+ MDT: a slave for its inodes and one for its Data-on-MDT blocks, no `quota_slave`.
    write(root, f"{lustre}/osd-ldiskfs/scratch-MDT0000/quota_slave_md/acct_user", ACCT_USER_MDT)
    write(root, f"{lustre}/osd-ldiskfs/scratch-MDT0000/quota_slave_dt/acct_user", ACCT_USER_MDT)
    write(root, f"{lustre}/qmt/scratch-QMT0000/dt-0x0/glb-usr", GLB_DT_USR)
    write(root, f"{lustre}/qmt/scratch-QMT0000/md-0x0/glb-usr", GLB_MD_USR)
    write(root, f"{lustre}/qmt/scratch-QMT0000/dt-0x0/glb-grp", GLB_DT_GRP)
    write(root, f"{lustre}/obdfilter/scratch-OST0003/exports/10.0.0.21@o2ib/stats", OST_EXPORT)
    write(root, f"{lustre}/mdt/scratch-MDT0000/exports/10.0.0.21@o2ib/stats", MDT_EXPORT)
    write(root, "dev/kmsg", "\n".join(KMSG) + "\n")
    write(root, "proc/stat", f"cpu  10 0 20 3000 5 0 1 0 0 0\nbtime {BTIME}\n")


def test_collect_once_prints_owners_clients_and_kernel_lines(tmp_path):
    build_tree(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "sensors", "collect", "--root", str(tmp_path), "--once"]
        + ["--format", "line", "--server", "mds01", "--tag", "ssu=ssu01"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stderr == ""
    points = parse_lines(result.stdout)

    # who fills OST0003: user 1001, about 90 TiB
    user = one(points, "owner_usage", target="OST0003", kind="user", id="1001")
    assert user.tags == {
        "fs": "scratch",
        "target": "OST0003",
        "kind": "user",
        "id": "1001",
        "server": "mds01",
        "ssu": "ssu01",
    }
    assert user.fields == {"kbytes": 96468992000, "inodes": 180344}
    assert len(points_of(points, "owner_usage", target="OST0003", kind="user")) == 3
    assert one(points, "owner_usage", kind="group", id="500").fields["kbytes"] == 96678707200
    assert one(points, "owner_usage", kind="project", id="0").fields["inodes"] == 185876
    # read once, from the first of its slaves
    assert one(points, "owner_usage", target="MDT0000", id="1001").fields["inodes"] == 180345

    # the quota master's limits of user 1001: blocks (KiB) and inodes in one point
    limits = one(points, "owner_quota", kind="user", id="1001")
    assert limits.tags["fs"] == "scratch" and limits.tags["pool"] == "0x0"
    assert limits.fields == {
        "kbytes_hard": 107374182400,
        "kbytes_soft": 96636764160,
        "kbytes_granted": 96469000192,
        "kbytes_time": 1764907200,
        "inodes_hard": 1000000,
        "inodes_soft": 900000,
        "inodes_granted": 180345,
        "inodes_time": 0,
    }
    assert one(points, "owner_quota", kind="group", id="0").fields["kbytes_time"] == 604800

    # the client's traffic on the OST and its metadata operations on the MDT
    ost = one(points, "ost_client", target="OST0003", client="10.0.0.21@o2ib")
    assert ost.fields["write_bytes"] == 4294967296 and ost.fields["write_calls"] == 4096
    assert ost.fields["read_bytes"] == 1073741824 and ost.fields["write_usecs"] == 4096000
    mdt = one(points, "mdt_client", target="MDT0000", client="10.0.0.21@o2ib")
    assert (mdt.fields["open"], mdt.fields["close"], mdt.fields["getattr"]) == (2048, 2048, 512)

    # what the kernel said: Lustre and LNet lines only, each at its own time
    lines = points_of(points, "kernel_log")
    assert [p.fields["sequence"] for p in lines] == [880, 1201, 1202, 1203, 1205]
    refused = one(points, "kernel_log", message_number="137-5")
    assert refused.tags["target"] == "OST0004" and refused.tags["severity"] == "err"
    assert refused.timestamp == BTIME * 1000 + 512000
    assert one(points, "kernel_log", subsystem="lnet").tags["severity"] == "err"
    recovery = points_of(points, "kernel_log", target="OST0003")
    assert [p.tags["severity"] for p in recovery] == ["warning", "warning"]

    (sensor,) = points_of(points, "sensor")
    assert sensor.fields["parse_errors"] == 0
    assert sensor.fields["kernel_lines"] == 5
    assert sensor.fields["usage_interval"] == 60.0
