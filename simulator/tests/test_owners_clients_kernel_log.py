"""Who owns the data, which client moved it and what the kernel said, on the virtual rack, read
with the sensor's own parsers: the owners' accounting and the quota master's limits
(sensors.quota), each client's export stats (sensors.lustre.ExportsReader through the
sensor's command line) and the kernel log (sensors.kmsg), after a workload or a failure."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from sensors.collect import Collector
from sensors.config import SensorConfig
from sensors.kmsg import KernelLog, lustre_line, parse_kmsg
from sensors.parsers import parse_stats
from sensors.quota import parse_quota_accounting, parse_quota_limits
from sensors.rounds import Round
from simulator import failures, scenarios
from simulator.rack import Rack
from simulator.state import RackError
from simulator.tests.conftest import REPO

GiB = 1 << 30
PROC = "proc/fs/lustre"


def run_job(root, seconds=30, **owner) -> dict:
    with Rack.open(root) as rack:
        rack.set_scenario("idle")
        job_id = scenarios.add_job(rack.state, stripe_count=2, size=200 * GiB, rate=800e6, **owner)
        job = dict(rack.state["jobs"][job_id])
        for _ in range(seconds // 10):
            rack.advance(by=10)
        job = rack.state["jobs"].get(job_id, job)
        rack.render()
    return job


def read(root, host, relative) -> str:
    return (root / "hosts" / host / relative).read_text()


def acct(root, host, label, kind) -> dict[int, tuple[int, int]]:
    text = read(root, host, f"{PROC}/osd-ldiskfs/{label}/quota_slave/acct_{kind}")
    return {owner: (kbytes, inodes) for owner, kbytes, inodes in parse_quota_accounting(text)}


def test_a_named_writer_owns_what_it_writes_on_each_target(built_rack):
    job = run_job(built_rack, uid=4242, gid=4343, projid=77)
    assert job["written"] > 10 * GiB
    with Rack.open(built_rack, read_only=True) as rack:
        targets = rack.state["targets"]
        for label in job["osts"]:
            host = targets[label]["mounted_on"]
            users = acct(built_rack, host, label, "user")
            # what the job wrote there, in KiB (rounded down once per step of the clock)
            written = job["on_ost"][label] // 1024
            assert written - 3 <= users[4242][0] <= written
            assert users[4242][1] == job["files"]  # one object per file on each stripe
            assert acct(built_rack, host, label, "group")[4343] == users[4242]
            assert acct(built_rack, host, label, "project")[77] == users[4242]
            # the accounting adds up to what the OST holds
            total = sum(kbytes for kbytes, _ in users.values())
            assert targets[label]["used_kib"] - 8 <= total <= targets[label]["used_kib"]
            assert 0 in users and 1001 in users  # root, and the data that was there before
        mdt = targets["scratch-MDT0000"]
        mdt_users = acct(built_rack, mdt["mounted_on"], "scratch-MDT0000", "user")
        assert mdt_users[4242] == (0, job["files"])


def test_a_jobs_owner_must_be_an_id(built_rack):
    with Rack.open(built_rack) as rack:
        with pytest.raises(RackError, match="--uid must be an id"):
            scenarios.add_job(rack.state, stripe_count=1, size=GiB, rate=1e8, uid=-1)


def test_the_default_workload_writes_as_the_site_users(built_rack):
    with Rack.open(built_rack) as rack:
        rack.set_scenario("balanced")
        rack.advance(by=10)
        owners = {job["owner"]["uid"] for job in rack.state["jobs"].values()}
    assert owners and owners <= {1001, 1002, 1003, 1004, 1005, 1006}


def test_lfs_setquota_and_lfs_quota_round_trip_through_the_quota_master(built_rack, host_cmd):
    job = run_job(built_rack, uid=4242, gid=4343)
    used_kib = sum(job["on_ost"].values()) // 1024
    set_limits = host_cmd(
        "mds01",
        "lfs",
        "setquota",
        "-u",
        "4242",
        "-b",
        "1G",
        "-B",
        "2T",
        "-i",
        "1k",
        "-I",
        "2k",
        "/mnt/scratch",
    )
    assert set_limits.returncode == 0, set_limits.stderr
    with Rack.open(built_rack, read_only=True) as rack:
        clock = rack.now
    glb = read(built_rack, "mds01", f"{PROC}/qmt/scratch-QMT0000/dt-0x0/glb-usr")
    limits = dict(parse_quota_limits(glb))
    assert limits[0]["time"] == 7 * 24 * 3600  # id 0: the grace period
    # over its 1 GiB soft limit: in grace for a week from now, as the quota master counts it
    assert limits[4242]["soft"] == 1024 * 1024 and limits[4242]["hard"] == 2 * 1024**3
    assert limits[4242]["time"] == int(clock) + 7 * 24 * 3600
    inodes = dict(
        parse_quota_limits(read(built_rack, "mds01", f"{PROC}/qmt/scratch-QMT0000/md-0x0/glb-usr"))
    )
    assert (inodes[4242]["soft"], inodes[4242]["hard"], inodes[4242]["time"]) == (1024, 2048, 0)
    shown = host_cmd("oss01", "lfs", "quota", "-u", "4242", "/mnt/scratch")
    assert shown.returncode == 0, shown.stderr
    title, header, row = shown.stdout.splitlines()
    assert title == "Disk quotas for usr 4242 (uid 4242):"
    assert header.split() == [
        "Filesystem",
        "kbytes",
        "quota",
        "limit",
        "grace",
        "files",
        "quota",
        "limit",
        "grace",
    ]
    fields = row.split()
    assert fields[0] == "/mnt/scratch"
    assert used_kib - 3 <= int(fields[1].rstrip("*")) <= used_kib and fields[1].endswith("*")
    assert fields[2:4] == ["1048576", "2147483648"]
    assert fields[4] == "1w"  # the grace left: all of it, the rack's clock has not moved
    assert fields[5:9] == [str(job["files"]), "1024", "2048", "-"]
    # a grace period, and bad input named by its field
    assert (
        host_cmd("mds01", "lfs", "setquota", "-t", "-u", "-b", "3d", "/mnt/scratch").returncode == 0
    )
    grace = host_cmd("mds01", "lfs", "quota", "-t", "-u", "/mnt/scratch").stdout
    assert grace == "Block grace time: 3d; Inode grace time: 1w\n"
    bad = host_cmd("mds01", "lfs", "setquota", "-u", "4242", "-b", "12x", "/mnt/scratch")
    assert bad.returncode != 0 and "block-softlimit '12x'" in bad.stderr
    name = host_cmd("mds01", "lfs", "setquota", "-g", "physics", "-B", "1T", "/mnt/scratch")
    assert name.returncode != 0 and "can't find id for name 'physics'" in name.stderr
    # all limits 0: the owner leaves the quota master's index
    host_cmd(
        "mds01",
        "lfs",
        "setquota",
        "-u",
        "4242",
        "-b",
        "0",
        "-B",
        "0",
        "-i",
        "0",
        "-I",
        "0",
        "/mnt/scratch",
    )
    glb = read(built_rack, "mds01", f"{PROC}/qmt/scratch-QMT0000/dt-0x0/glb-usr")
    assert [owner for owner, _ in parse_quota_limits(glb)] == [0]


def test_each_client_has_its_own_export_stats_counted_from_its_io(built_rack):
    job = run_job(built_rack)
    client = job["client"]
    assert re.fullmatch(r"169\.254\.\d+\.\d+@tcp", client)
    with Rack.open(built_rack, read_only=True) as rack:
        targets = rack.state["targets"]
        assert not [c for c in rack.state["clients"] if c.startswith(("10.", "192.168.", "172."))]
    label = job["osts"][0]
    host = targets[label]["mounted_on"]
    stats = parse_stats(read(built_rack, host, f"{PROC}/obdfilter/{label}/exports/{client}/stats"))
    assert stats["counters"]["write_bytes"]["sum"] == job["on_ost"][label]
    # the sensor's command line reads them as the client's points
    lines = subprocess.run(
        [
            sys.executable,
            "-m",
            "sensors",
            "collect",
            "--root",
            str(built_rack / "hosts" / host),
            "--once",
            "--format",
            "line",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    mine = [
        line
        for line in lines
        if line.startswith("ost_client,")
        and f"client={client}" in line
        and re.search(f"target={label.partition('-')[2]}[ ,]", line)
    ]
    assert len(mine) == 1 and f"write_bytes={job['on_ost'][label]}i" in mine[0]
    mdt = targets["scratch-MDT0000"]
    md = parse_stats(
        read(built_rack, mdt["mounted_on"], f"{PROC}/mdt/scratch-MDT0000/exports/{client}/stats")
    )
    assert md["counters"]["open"]["samples"] == job["files"]
    assert md["counters"]["mknod"]["samples"] == job["files"]


def kernel_lines(root, host) -> list[str]:
    return [r.message for r in parse_kmsg(read(root, host, "dev/kmsg"))]


def inject(root, kind, **where):
    with Rack.open(root) as rack:
        failure = failures.inject(rack, kind, **where)
        rack.render()
    return failure


def test_a_server_crash_writes_the_partners_recovery_once(clustered_rack):
    sensor = KernelLog(str(clustered_rack / "hosts" / "oss01"), str(clustered_rack / "spool01"))
    rnd = Round(1, {"server": "oss01"})
    sensor.collect(rnd)
    sensor.commit()
    crash = inject(clustered_rack, "server-crash", server="oss01")
    oss02 = kernel_lines(clustered_rack, "oss02")
    with Rack.open(clustered_rack, read_only=True) as rack:
        clients = len(rack.state["clients"])
        moved = sorted(
            label
            for label, t in rack.state["targets"].items()
            if t["kind"] == "OST" and t["index"] % 2 == 0
        )
        assert all(rack.state["targets"][label]["mounted_on"] == "oss02" for label in moved)
    for label in moved:
        waiting = (
            f"Lustre: {label}: Will be in recovery for at least 2:30, or until {clients} "
            "clients reconnect"
        )
        assert oss02.count(waiting) == 1
    mds = kernel_lines(clustered_rack, "mds01")
    assert (
        mds.count(
            "Lustre: scratch-OST0000-osc-MDT0000: Connection to scratch-OST0000 "
            "(at 10.10.0.11@o2ib) was lost; in progress operations using this service will "
            "wait for recovery to complete"
        )
        == 1
    )
    assert (
        mds.count(
            "Lustre: scratch-OST0000-osc-MDT0000: Connection restored to 10.10.0.12@o2ib "
            "(at 10.10.0.12@o2ib)"
        )
        == 1
    )
    # the window passes: recovery is over, said once however often the rack is saved
    for _ in range(4):
        with Rack.open(clustered_rack) as rack:
            rack.advance(by=50)
            rack.render()
    over = [line for line in kernel_lines(clustered_rack, "oss02") if "Recovery over" in line]
    assert over == [
        f"Lustre: {label}: Recovery over after 2:30, of {clients} clients {clients} recovered "
        "and 0 were evicted."
        for label in moved
    ]
    # the sensor's parser tags them by target, as a real server's
    records = parse_kmsg(read(clustered_rack, "oss02", "dev/kmsg"))
    tags = [lustre_line(r) for r in records if "Recovery over" in r.message]
    assert tags[0]["target"] == "OST0000" and tags[0]["severity"] == "info"
    # the crashed server boots again: a new boot id and numbering, from the kernel's first line
    old_boot = read(clustered_rack, "oss01", "proc/sys/kernel/random/boot_id")
    with Rack.open(clustered_rack) as rack:
        failures.clear(rack, crash["id"])
        rack.render()
    assert read(clustered_rack, "oss01", "proc/sys/kernel/random/boot_id") != old_boot
    records = parse_kmsg(read(clustered_rack, "oss01", "dev/kmsg"))
    assert records[0].sequence == 0 and records[0].message.startswith("Linux version")
    # the sensor reads the new boot from its start, loses nothing and repeats nothing
    sensor = KernelLog(str(clustered_rack / "hosts" / "oss01"), str(clustered_rack / "spool01"))
    rnd = Round(2, {"server": "oss01"})
    sensor.collect(rnd)
    assert rnd.counts["kernel_lines_lost"] == 0
    assert sensor.sequence == records[-1].sequence


def test_a_lost_volume_group_logs_its_io_errors_once_and_its_peers_enodev(clustered_rack):
    for _ in range(3):
        inject(clustered_rack, "drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00")
    with Rack.open(clustered_rack) as rack:
        rack.advance(by=10)
        rack.render()
    oss01 = kernel_lines(clustered_rack, "oss01")
    assert (
        oss01.count(
            [
                line
                for line in oss01
                if line.endswith("scratch-OST0000: unable to precreate: rc = -30")
            ][0]
        )
        == 1
    )
    assert len([line for line in oss01 if "Remounting filesystem read-only" in line]) == 1
    mds = kernel_lines(clustered_rack, "mds01")
    assert (
        mds.count(
            "LustreError: 11-0: scratch-OST0000-osc-MDT0000: operation ost_connect to node "
            "10.10.0.11@o2ib failed: rc = -19"
        )
        == 1
    )


def test_a_full_ost_and_a_lost_lnet_link_are_logged_once(clustered_rack):
    with Rack.open(clustered_rack) as rack:
        rack.set_scenario("filling")  # writes stop at 95 %
        filled = scenarios.skew_fill(rack.state, 1, 100)
        rack.render()
        rack.render()
    host = "oss01" if int(filled[0][-4:], 16) % 2 == 0 else "oss02"
    full = [line for line in kernel_lines(clustered_rack, host) if line.endswith("rc = -28")]
    assert len(full) == 1 and f"{filled[0]}: unable to precreate" in full[0]
    inject(clustered_rack, "lnet-down", server="oss01")
    oss01 = kernel_lines(clustered_rack, "oss01")
    assert (
        oss01.count([line for line in oss01 if "Timed out tx for 10.10.0.1@o2ib" in line][0]) == 1
    )
    assert any(
        line.startswith("LNetError:") and "10.10.0.11@o2ib" in line
        for line in kernel_lines(clustered_rack, "mds01")
    )


def test_the_sensor_reads_every_new_file_of_a_busy_server_without_a_problem(built_rack):
    job = run_job(built_rack, uid=4242)
    with Rack.open(built_rack, read_only=True) as rack:
        hosts = {rack.state["targets"][label]["mounted_on"] for label in job["osts"]}
    for host in sorted(hosts) + ["mds01"]:
        config = SensorConfig(
            root=str(built_rack / "hosts" / host), collectors=("usage", "exports", "kmsg")
        )
        rnd = Collector(config).collect(1_800_000_000_000)
        assert rnd.errors == 0
        kinds = {line.partition(",")[0] for line in rnd.lines}
        assert {"owner_usage", "kernel_log"} <= kinds
        assert ("ost_client" if host != "mds01" else "mdt_client") in kinds
    # the quota master's limits, on the server of MDT0000
    assert any(line.startswith("owner_quota,") for line in rnd.lines)


def test_a_server_cut_from_lnet_evicts_the_clients_that_held_its_locks(built_rack):
    # no cluster on this rack: nothing moves the targets away from the server
    job = run_job(built_rack, seconds=10, server="oss01")
    inject(built_rack, "lnet-down", server="oss01")

    def evictions():
        return [line for line in kernel_lines(built_rack, "oss01") if "evicting client" in line]

    assert evictions() == []  # the lock callback timer has not expired yet
    for _ in range(3):
        with Rack.open(built_rack) as rack:
            rack.advance(by=50)
            rack.render()
    (line,) = evictions()
    assert f"lock callback timer expired after 100s: evicting client at {job['client']} " in line
    # LDLM_ERROR from the lock timer (no process: pid 0), naming the OST's lock namespace
    assert line.startswith("LustreError: 0:0:(ldlm_lockd.c:")
    assert f" ns: filter-{job['osts'][0]}_UUID lock: " in line


def test_the_mgs_moving_is_logged_by_every_other_servers_mgc(clustered_rack):
    inject(clustered_rack, "server-crash", server="mds01")
    with Rack.open(clustered_rack, read_only=True) as rack:
        assert rack.state["targets"]["MGS"]["mounted_on"] == "mds02"
    for host in ("oss01", "oss02"):
        lines = kernel_lines(clustered_rack, host)
        assert (
            lines.count(
                "LustreError: 166-1: MGC10.10.0.1@o2ib: Connection to MGS (at 10.10.0.1@o2ib) was "
                "lost; in progress operations using this service will fail"
            )
            == 1
        )
        assert (
            lines.count(
                "Lustre: MGC10.10.0.1@o2ib: Connection restored to 10.10.0.2@o2ib "
                "(at 10.10.0.2@o2ib)"
            )
            == 1
        )
    # the OSTs' connections to the MDT moved with it: their LWP say so, recovery is on mds02
    assert any(
        line.startswith("Lustre: scratch-MDT0000-lwp-OST0000: Connection to scratch-MDT0000")
        for line in kernel_lines(clustered_rack, "oss01")
    )
    assert any(
        "scratch-MDT0000: Will be in recovery" in line
        for line in kernel_lines(clustered_rack, "mds02")
    )
