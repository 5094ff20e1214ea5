"""Counters in the virtual rack behave like the kernel's: they only grow while a target stays
mounted and a server stays up, and start again from zero after a reboot or remount."""

from __future__ import annotations

from sensors import parsers
from simulator import operations
from simulator.rack import Rack


def snapshot(root):
    """Every cumulative number a sensor would read on oss01, keyed by where it came from."""
    host = root / "hosts/oss01"
    values = {}
    for ost in sorted((host / "proc/fs/lustre/obdfilter").iterdir()):
        stats = parsers.parse_stats((ost / "stats").read_text())
        for name, c in stats["counters"].items():
            values[(ost.name, "stats", name, "samples")] = c["samples"]
            values[(ost.name, "stats", name, "sum")] = c["sum"]
        for job in parsers.parse_job_stats((ost / "job_stats").read_text()):
            for name, c in job["counters"].items():
                values[(ost.name, "job", job["job_id"], name)] = c["samples"]
                values[(ost.name, "jobsum", job["job_id"], name)] = c["sum"]
        brw = parsers.parse_brw_stats(
            (host / "sys/kernel/debug/lustre/osd-ldiskfs" / ost.name / "brw_stats").read_text()
        )
        for section, rows in brw["sections"].items():
            for bucket, row in rows.items():
                values[(ost.name, "brw", section, bucket)] = row["read_ios"] + row["write_ios"]
    lnet = parsers.parse_lnet_stats((host / "sys/kernel/debug/lnet/stats").read_text())
    for name in ("send_count", "recv_count", "send_length", "recv_length"):
        values[("lnet", name)] = lnet[name]
    cpu = (host / "proc/stat").read_text().splitlines()[0].split()[1:]
    for i, v in enumerate(cpu):
        values[("cpu", i)] = int(v)
    io = parsers.parse_stats((host / "sys/kernel/debug/lustre/ost/OSS/ost_io/stats").read_text())
    for name, c in io["counters"].items():
        values[("ost_io", name)] = c["samples"]
    return values


def run(root, seconds, steps=3, scenario="balanced"):
    with Rack.open(root) as rack:
        if scenario:
            rack.set_scenario(scenario)
        for _ in range(steps):
            rack.advance(by=seconds)
        rack.render()


def test_counters_only_grow(built_rack):
    run(built_rack, 10)
    before = snapshot(built_rack)
    run(built_rack, 10, steps=5, scenario=None)
    after = snapshot(built_rack)
    common = before.keys() & after.keys()
    assert len(common) > 500
    shrunk = {k: (before[k], after[k]) for k in common if after[k] < before[k]}
    assert shrunk == {}
    grew = [k for k in common if after[k] > before[k]]
    assert any(k[1] == "stats" and k[2] == "write_bytes" for k in grew)
    assert any(k[1] == "job" for k in grew)
    assert any(k[1] == "brw" for k in grew)
    assert ("lnet", "recv_length") in grew and ("ost_io", "ost_write") in grew


def test_reboot_resets_the_counters(built_rack, ssu_plan):
    run(built_rack, 10)
    ost = built_rack / "hosts/oss01/proc/fs/lustre/obdfilter/scratch-OST0000"
    before = parsers.parse_stats((ost / "stats").read_text())
    with Rack.open(built_rack) as rack:
        operations.power_off(rack.state, "oss01")
        rack.render(["oss01"])
        assert not ost.exists()  # a server that is down has no Lustre tree
        rack.advance(by=30)
        operations.power_on(rack.state, "oss01", rack.now)
        target = next(t for t in ssu_plan["targets"] if t["label"] == "scratch-OST0000")
        operations.mount_target(
            rack.state, "oss01", target["device"], target["mountpoint"], rack.now
        )
        rack.advance(by=10)
        rack.render()
    after = parsers.parse_stats((ost / "stats").read_text())
    assert after["start_time"] > before["snapshot_time"]
    assert after["counters"]["statfs"]["samples"] < before["counters"]["statfs"]["samples"]
    cpu_after = int((built_rack / "hosts/oss01/proc/stat").read_text().split()[4])
    assert cpu_after <= 10 * 100 * 32  # idle jiffies since the new boot only
    status = parsers.parse_recovery_status((ost / "recovery_status").read_text())
    assert status["status"] == "RECOVERING"  # clients reconnect after the restart
