"""The kernel's Lustre and LNet lines from dev/kmsg: which lines, their tags, their time, and
that a restart neither loses nor repeats one (reboots, overwritten records and storms
included). There is no real kmsg sample in the fixtures: the records below are written by hand
in the format of /dev/kmsg (Documentation/ABI/testing/dev-kmsg) with messages in the forms
Lustre prints them."""

from __future__ import annotations

import errno
import gzip
import json
import logging
import os

import pytest

from sensors import kmsg, rounds
from sensors.agent import Agent
from sensors.collect import Collector
from sensors.config import ConfigError, SensorConfig, load_config
from sensors.kmsg import KernelLog, parse_kmsg
from sensors.parsers import ParseError
from sensors.rounds import Round
from sensors.tests.lp import parse_lines, points_of

TS = 1_764_300_600_000
BTIME = 1_764_300_000  # proc/stat: the server booted 600 s before the round

RECORDS = [
    "3,1201,5123456789,-;LustreError: 11-0: scratch-OST0003-osc-MDT0000: operation "
    "ost_connect to node 10.0.0.3@o2ib failed: rc = -16",
    " SUBSYSTEM=lustre",
    " DEVICE=+lustre:scratch",
    "6,1202,5123457000,-;systemd[1]: Started Session 4 of user root.",
    "4,1203,5123460000,-;Lustre: scratch-OST0003: Recovery over after 0:45, of 12 clients 12 "
    "recovered and 0 were evicted.",
    "3,1204,5200000000,-;LNetError: 2862:0:(o2iblnd_cb.c:3402:kiblnd_check_conns()) Timed out "
    "tx for 10.0.0.5@o2ib: 4 seconds",
    # user space writing into /dev/kmsg (facility 1): not the kernel's
    "11,1205,5200000100,-;LustreError: 167-0: scratch-OST0001: not from the kernel",
    "3,1206,5200000200,-;LustreError: 167-0: scratch-MDT0000-mdc-ffff8a0c3b1f9000: This client "
    "was evicted by scratch-MDT0000; in progress operations using this service will fail.",
]


def server(tmp_path, records, boot_id="1d3b6c1e-0a7c-4f4e-9a55-3c0b9d0c2f11", btime=BTIME):
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True, exist_ok=True)
    (root / "dev" / "kmsg").write_text("\n".join(records) + "\n")
    if boot_id is not None:
        (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
        (root / "proc/sys/kernel/random/boot_id").write_text(boot_id + "\n")
    if btime is not None:
        (root / "proc").mkdir(exist_ok=True)
        (root / "proc/stat").write_text(f"cpu  1 2 3 4 0 0 0 0 0 0\nbtime {btime}\n")
    return root


def read_round(log: KernelLog, timestamp: int = TS):
    rnd = Round(timestamp, {"server": "oss01"})
    log.collect(rnd)
    return rnd, parse_lines(rnd.lines)


def sequences(points) -> list[int]:
    return [p.fields["sequence"] for p in points_of(points, "kernel_log")]


def test_lustre_and_lnet_lines_with_target_message_number_and_severity(tmp_path):
    log = KernelLog(str(server(tmp_path, RECORDS)))
    rnd, points = read_round(log)
    lines = points_of(points, "kernel_log")
    assert sequences(points) == [1201, 1203, 1204, 1206]
    connect, recovery, lnet, evicted = lines
    assert connect.tags == {
        "server": "oss01",
        "subsystem": "lustre",
        "severity": "err",
        "message_number": "11-0",
        "fs": "scratch",
        "target": "OST0003",
    }
    assert connect.fields["message"].startswith("LustreError: 11-0: scratch-OST0003-osc-MDT0000")
    assert recovery.tags["severity"] == "warning" and "message_number" not in recovery.tags
    assert recovery.tags["target"] == "OST0003"
    assert lnet.tags == {"server": "oss01", "subsystem": "lnet", "severity": "err"}
    assert (evicted.tags["target"], evicted.tags["message_number"]) == ("MDT0000", "167-0")
    # each line at its own time: boot time + the record's microseconds
    assert connect.timestamp == BTIME * 1000 + 5123456
    assert lnet.timestamp == BTIME * 1000 + 5200000
    assert rnd.counts == {
        "kernel_lines": 4,
        "kernel_lines_suppressed": 0,
        "kernel_lines_lost": 0,
    }


def test_an_eviction_by_lock_callback_names_its_target_from_the_lock_namespace(tmp_path):
    record = (
        "3,88,9000000000,-;LustreError: 0:0:(ldlm_lockd.c:261:expired_lock_main()) ### lock "
        "callback timer expired after 101s: evicting client at 169.254.7.20@tcp  ns: "
        "filter-scratch-OST0003_UUID lock: 00000000c0ffee00/0x1a2b3c4d5e6f7a8b lrc: 3/0,0 "
        "mode: PW/PW res: [0x2c0000401:0x5:0x0].0x0 rrc: 3 type: EXT [0->18446744073709551615]"
    )
    mdt = "4,89,9000000100,-;Lustre: mdt-scratch-MDT0000_UUID: evicting client at 0@lo"
    _rnd, points = read_round(KernelLog(str(server(tmp_path, [record, mdt]))))
    tagged = [(p.tags["fs"], p.tags["target"]) for p in points_of(points, "kernel_log")]
    assert tagged == [("scratch", "OST0003"), ("scratch", "MDT0000")]


def test_a_malformed_record_is_refused_by_its_line(tmp_path, caplog):
    with pytest.raises(ParseError, match="line 2: not a kmsg record"):
        parse_kmsg("6,1,2,-;Lustre: fine\nLustre: no header\n")
    root = server(tmp_path, [*RECORDS, "3,x,5,-;LustreError: broken"])
    rounds._last_logged.clear()
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = read_round(KernelLog(str(root)))
    assert rnd.errors == 1
    assert "dev/kmsg: ParseError: line 9: not a kmsg record" in caplog.text
    assert points_of(points, "kernel_log") == []


def test_a_restart_neither_loses_nor_repeats_a_line(tmp_path):
    state = tmp_path / "spool"
    root = server(tmp_path, RECORDS[:6])
    log = KernelLog(str(root), str(state))
    _, points = read_round(log)
    assert sequences(points) == [1201, 1203, 1204]
    _, points = read_round(log, TS + 10_000)
    assert sequences(points) == []  # nothing new: nothing again
    log.commit()  # the round's points were sent
    log.close()
    # the sensor restarts while the kernel logs two more lines
    server(tmp_path, RECORDS)
    restarted = KernelLog(str(root), str(state))
    _, points = read_round(restarted, TS + 20_000)
    assert sequences(points) == [1206]


def test_lines_read_but_not_sent_before_a_crash_are_read_again_onto_the_same_points(tmp_path):
    state = tmp_path / "spool"
    root = server(tmp_path, RECORDS)
    first = read_round(KernelLog(str(root), str(state)))[1]
    # killed before the round was sent: no commit, so the lines come again, at the same times
    again = read_round(KernelLog(str(root), str(state)), TS + 10_000)[1]
    assert [(p.tags, p.timestamp) for p in again] == [(p.tags, p.timestamp) for p in first]


def test_after_a_reboot_the_new_numbering_is_read_from_its_start(tmp_path):
    state = tmp_path / "spool"
    root = server(tmp_path, RECORDS)
    log = KernelLog(str(root), str(state))
    read_round(log)
    log.commit()
    rebooted = [
        "6,0,0,-;Linux version 4.18.0-513.el8.x86_64",
        "4,1,35000000,-;Lustre: scratch-OST0003: Imperative Recovery not enabled, recovery "
        "window 300-900",
    ]
    server(tmp_path, rebooted, boot_id="8f0e3a52-7d44-4b8e-b1c0-2a6f9e4d7c30")
    _, points = read_round(KernelLog(str(root), str(state)), TS + 900_000)
    assert sequences(points) == [1]


def test_without_a_boot_id_a_numbering_that_went_back_is_a_reboot(tmp_path):
    root = server(tmp_path, RECORDS, boot_id=None)
    log = KernelLog(str(root), str(tmp_path / "spool"))
    read_round(log)
    server(tmp_path, ["4,3,35000000,-;Lustre: scratch-OST0003: recovery started"], boot_id=None)
    _, points = read_round(log, TS + 900_000)
    assert sequences(points) == [3]


def test_records_overwritten_before_they_were_read_are_counted_lost(tmp_path):
    root = server(tmp_path, RECORDS[:3])
    log = KernelLog(str(root))
    read_round(log)  # up to 1201
    # the ring wrapped: 1202 to 1205 were overwritten before the next read
    server(tmp_path, RECORDS[7:])
    rnd, points = read_round(log, TS + 10_000)
    assert sequences(points) == [1206]
    assert rnd.counts["kernel_lines_lost"] == 4


def test_a_storm_is_counted_not_sent_line_by_line(tmp_path):
    storm = [
        f"3,{2000 + n},{6000000000 + n},-;LustreError: 11-0: scratch-OST0003-osc-MDT0000: "
        "operation ost_connect to node 10.0.0.3@o2ib failed: rc = -107"
        for n in range(40)
    ] + [
        f"4,{2040 + n},{6100000000 + n},-;Lustre: scratch-OST0001: Client abc (at 10.0.0.9@o2ib) "
        "reconnecting"
        for n in range(3)
    ]
    log = KernelLog(str(server(tmp_path, storm)), max_lines=5)
    rnd, points = read_round(log)
    assert sequences(points) == [2000, 2001, 2002, 2003, 2004]
    ost3 = points_of(points, "kernel_storm", target="OST0003", message_number="11-0")
    assert [p.fields for p in ost3] == [
        {"lines": 35, "first_sequence": 2005, "last_sequence": 2039}
    ]
    (ost1,) = points_of(points, "kernel_storm", target="OST0001")
    assert ost1.fields["lines"] == 3 and ost1.tags["severity"] == "warning"
    assert rnd.counts["kernel_lines_suppressed"] == 38
    # lines of one round never share a millisecond (they would overwrite each other)
    times = [p.timestamp for p in points_of(points, "kernel_log")]
    assert len(set(times)) == 5
    # the storm is over: the next round sends nothing again, and says so
    rnd, points = read_round(log, TS + 10_000)
    assert points == []
    assert rnd.counts == {
        "kernel_lines": 0,
        "kernel_lines_suppressed": 0,
        "kernel_lines_lost": 0,
    }


def test_the_character_device_one_record_per_read_epipe_and_a_bad_record(tmp_path, monkeypatch):
    """A real /dev/kmsg cannot be made here (mknod needs root): the device is played by a
    plain file whose reads give what the kernel gives (one record each, EPIPE when the reader's
    records were overwritten, EAGAIN when it has read everything). A record that is not one is
    counted and passed, the device read on (reopened, it would start at the oldest record and
    stop at the bad one every round)."""
    root = server(tmp_path, [])
    device = str(root / "dev" / "kmsg")
    answers = [
        (RECORDS[0] + "\n" + RECORDS[1] + "\n").encode(),
        OSError(errno.EPIPE, "Broken pipe"),
        b"not a record\n",
        (RECORDS[7] + "\n").encode(),
        BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"),
    ]
    real_read, real_stat = os.read, os.stat
    opened = []

    def fake_stat(path, *args, **kwargs):
        result = real_stat(path, *args, **kwargs)
        if str(path) == device:
            return os.stat_result((0o020600, *tuple(result)[1:]))
        return result

    def fake_read(fd, size):
        if fd in opened:
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return real_read(fd, size)

    real_open = os.open

    def fake_open(path, flags, *args):
        fd = real_open(path, flags, *args)
        if str(path) == device:
            assert flags & os.O_NONBLOCK
            opened.append(fd)
        return fd

    monkeypatch.setattr(kmsg.os, "stat", fake_stat)
    monkeypatch.setattr(kmsg.os, "read", fake_read)
    monkeypatch.setattr(kmsg.os, "open", fake_open)
    log = KernelLog(str(root))
    rnd, points = read_round(log)
    log.close()
    assert sequences(points) == [1201, 1206]
    assert rnd.counts["kernel_lines_lost"] == 4
    assert rnd.errors == 1 and len(opened) == 1


def test_the_service_keeps_its_place_once_the_round_is_spooled(tmp_path):
    """Two runs of the service on one spool directory, InfluxDB down: every Lustre line is in
    the spooled batches exactly once."""
    root = server(tmp_path, RECORDS[:6])
    spool = tmp_path / "spool"
    config = SensorConfig(
        server="oss01",
        root=str(root),
        collectors=("kmsg",),
        influxdb_url="http://127.0.0.1:9",  # nothing listens: the rounds go to the spool
        timeout=1.0,
        spool_dir=str(spool),
    )
    for records, tick in ((RECORDS[:6], 1_764_300_600.0), (RECORDS, 1_764_300_610.0)):
        server(tmp_path, records)
        agent = Agent(config)
        agent.round(tick)
        agent.collector.close()  # the service stops
        agent.sender.writer.close()
        agent.spool.close()
    assert json.loads((spool / "kmsg.json").read_text())["sequence"] == 1206
    spooled = []
    for batch in sorted(spool.glob("*.lp.gz")):
        spooled += parse_lines(gzip.decompress(batch.read_bytes()).decode())
    assert sequences(spooled) == [1201, 1203, 1204, 1206]


def test_the_bound_comes_from_the_configuration(tmp_path):
    path = tmp_path / "sensor.conf"
    path.write_text("[kmsg]\nmax_lines = 0\n")
    with pytest.raises(ConfigError, match=r"\[kmsg\] max_lines must be positive"):
        load_config(path)
    path.write_text("[kmsg]\nmax_lines = 2\n")
    config = load_config(path)
    config.root = str(server(tmp_path, RECORDS))
    rnd = Collector(config).collect(TS)
    points = parse_lines(rnd.lines)
    assert sequences(points) == [1201, 1203]
    assert rnd.counts["kernel_lines_suppressed"] == 2


def test_lines_of_the_same_millisecond_in_later_rounds_and_after_a_restart_keep_their_own_time(
    tmp_path,
):
    """A young boot's (or a storm's) lines may all carry the same microseconds: each round's and
    each restart's come after the last one sent, so none overwrites an earlier line's point."""
    same = "4,{n},41900000,-;Lustre: scratch-OST000{n}-osc-MDT0000: Connection to scratch-OST000{n}"
    records = [same.format(n=n) for n in range(1, 4)]
    spool = tmp_path / "spool"
    log = KernelLog(str(server(tmp_path, records[:1])), str(spool))
    times = [p.timestamp for p in points_of(read_round(log)[1], "kernel_log")]
    log.commit()
    server(tmp_path, records[:2])
    times += [p.timestamp for p in points_of(read_round(log, TS + 5000)[1], "kernel_log")]
    log.commit()
    log.close()
    server(tmp_path, records)
    restarted = KernelLog(str(tmp_path / "root"), str(spool))
    times += [p.timestamp for p in points_of(read_round(restarted, TS + 10000)[1], "kernel_log")]
    assert times == [BTIME * 1000 + 41900 + n for n in range(3)]
