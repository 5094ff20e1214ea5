"""Every outside collector on its own interval: `ipmitool sensor` once a minute by default, a
slow collector never holding a round, its lateness in the `sensor` point."""

from __future__ import annotations

import gzip
import threading
import time
from pathlib import Path

import pytest

from sensors import agent as agent_module
from sensors.agent import Agent
from sensors.arrays import ArrayComponent
from sensors.collect import Collector
from sensors.config import ConfigError, SensorConfig, load_config
from sensors.sender import encode_batches
from sensors.tests.lp import STATIC, one, parse_lines, points_of

IPMITOOL_SENSOR = "CPU1 Temp | 45.000 | degrees C | ok | na | na | na | 85.000 | 90.000 | na"


def counting_command(tmp_path: Path, name: str, output: str, sleep: float = 0.0) -> str:
    """A command that notes each run in `<name>.runs` and prints `output`."""
    path = tmp_path / name
    runs = tmp_path / f"{name}.runs"
    pause = f"sleep {sleep}\n" if sleep else ""
    path.write_text(f"#!/bin/sh\necho run >> {runs}\n{pause}cat <<'E'\n{output}\nE\n")
    path.chmod(0o755)
    return str(path)


def runs(tmp_path: Path, name: str) -> int:
    path = tmp_path / f"{name}.runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


class FakeClock:
    """The agent's wall clock, moved on by its waits: three minutes of rounds in a moment."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return time.monotonic()


class FakeWait:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def wait(self, seconds: float) -> bool:
        self.clock.now += seconds
        return False

    def is_set(self) -> bool:
        return False

    def set(self) -> None:
        pass


def config_for(tmp_path: Path, **settings) -> SensorConfig:
    return SensorConfig(
        server="oss01",
        root=str(tmp_path / "root"),
        tags=dict(STATIC),
        influxdb_url="http://127.0.0.1:9",  # nothing listens: the rounds go to the spool
        timeout=1.0,
        spool_dir=str(tmp_path / "spool"),
        **settings,
    )


def test_with_the_default_intervals_ipmitool_sensor_runs_once_a_minute(tmp_path, monkeypatch):
    ipmitool = counting_command(tmp_path, "ipmitool", IPMITOOL_SENSOR)
    corosync = counting_command(tmp_path, "corosync-cfgtool", "")
    multipath = counting_command(tmp_path, "multipath", "")
    config = config_for(
        tmp_path,
        collectors=("node", "bmc", "cluster", "multipath"),
        bmc_command=f"{ipmitool} sensor",
        cluster_command=f"{corosync} -s",
        multipath_command=f"{multipath} -ll",
    )
    clock = FakeClock(1_800_000_000.0)
    monkeypatch.setattr(agent_module, "time", clock)
    agent = Agent(config)
    agent.stop_event = FakeWait(clock)
    agent.run(max_rounds=18)  # three minutes of 10 s rounds

    assert agent.rounds == 18
    assert runs(tmp_path, "ipmitool") == 3
    assert runs(tmp_path, "multipath") == 6
    assert runs(tmp_path, "corosync-cfgtool") == 18


def test_a_slow_collector_does_not_hold_the_round_and_its_points_come_later(tmp_path):
    ipmitool = counting_command(tmp_path, "ipmitool", IPMITOOL_SENSOR, sleep=1.5)
    config = config_for(
        tmp_path,
        interval=1.5,  # a round waits 1.2 s at most
        collectors=("bmc",),
        bmc_command=f"{ipmitool} sensor",
        intervals={"bmc": 10.0},
    )
    collector = Collector(config)
    first = collector.collect(1_000_000)
    assert first.seconds < 1.5  # the round's deadline, not the BMC's 1.5 s
    assert points_of(parse_lines(first.lines), "bmc") == []
    assert first.schedule == {"bmc_interval": 10.0, "bmc_late": 0.0}

    second = collector.collect(1_001_500)
    points = parse_lines(second.lines)
    # Written with the round it belongs to: the tick it started at.
    assert one(points, "bmc", sensor="CPU1 Temp").timestamp == 1_000_000
    assert second.schedule["bmc_seconds"] >= 1.5
    assert runs(tmp_path, "ipmitool") == 1


class HungArray:
    """An array conversation that ignores its timeout (a hung management port), until the
    test lets it answer."""

    def __init__(self) -> None:
        self.answer = threading.Event()
        self.calls = 0

    def components(self) -> list[ArrayComponent]:
        self.calls += 1
        self.answer.wait(60)
        return [ArrayComponent("ssu01-a", "controller", "A", "optimal", True)]


def test_a_collector_still_running_is_not_started_again_and_is_reported_late(tmp_path):
    array = HungArray()
    config = config_for(tmp_path, interval=1.0, collectors=("array",), intervals={"array": 1.0})
    collector = Collector(config, array_source=array)
    # Hung through three rounds (each waits for it until its deadline, 0.8 s), then it answers:
    # on a slow machine as on a fast one.
    rounds = [collector.collect(1_000_000 + 1000 * n) for n in range(3)]
    array.answer.set()
    rounds.append(collector.collect(1_003_000))
    assert array.calls == 1
    assert [r.schedule.get("array_late") for r in rounds[1:3]] == [0.0, 1.0]
    # However late, its points are the reading of the round that started it.
    (late,) = [r for r in rounds if points_of(parse_lines(r.lines), "array")]
    assert late is rounds[3] and late.schedule["array_seconds"] > 2.0
    assert one(parse_lines(late.lines), "array", id="A").timestamp == 1_000_000


def test_intervals_and_timeouts_come_from_each_collectors_section(tmp_path):
    path = tmp_path / "sensor.conf"
    path.write_text(
        "[sensor]\ninterval = 5\ncommand_timeout = 4\n"
        "[bmc]\ncommand = ipmitool sensor\ninterval = 120\ntimeout = 30\n"
        "[array]\ninterval = 300\n[multipath]\ninterval = 15\ntimeout = 2\n"
        "[partner]\nhost = oss02\nbmc_command = ipmitool chassis power status\ninterval = 20\n"
    )
    config = load_config(path)
    assert config.interval_of("bmc") == 120 and config.timeout_of("bmc") == 30
    assert config.interval_of("array") == 300 and config.timeout_of("array") == 20
    assert config.interval_of("multipath") == 15 and config.timeout_of("multipath") == 2
    assert config.interval_of("partner_bmc") == config.interval_of("partner_pdu") == 20
    assert config.interval_of("cluster") == 10 and config.timeout_of("cluster") == 4
    assert config.interval_of("node") == 5  # the files: every round
    # A collector runs at most once a round.
    path.write_text("[sensor]\ninterval = 20\n[bmc]\ninterval = 5\n")
    config = load_config(path)
    assert config.interval_of("bmc") == 20 and config.interval_of("lnet") == 20
    path.write_text("[bmc]\ninterval = soon\n")
    with pytest.raises(ConfigError, match=r"\[bmc\] interval = 'soon' is not a number"):
        load_config(path)


def test_the_defaults_are_a_minute_for_the_bmc_arrays_and_partner(tmp_path):
    config = SensorConfig()
    intervals = {
        name: config.interval_of(name)
        for name in ("bmc", "array", "partner_bmc", "partner_pdu", "multipath", "cluster", "lnet")
    }
    assert intervals == {
        "bmc": 60,
        "array": 60,
        "partner_bmc": 60,
        "partner_pdu": 60,
        "multipath": 30,
        "cluster": 10,
        "lnet": 10,
    }


def test_a_rounds_sensor_point_is_its_last_line_in_its_last_batch(tmp_path):
    """The health engine counts a server's round once its `sensor` point has landed: the point
    must come after every other of the round, whatever batches the round is cut into."""
    proc = tmp_path / "root" / "proc"
    proc.mkdir(parents=True)
    (proc / "loadavg").write_text("1.50 1.20 0.90 2/312 4711\n")
    (proc / "meminfo").write_text("MemTotal: 262144000 kB\nMemAvailable: 200000000 kB\n")
    agent = Agent(config_for(tmp_path, collectors=("node",), batch_size=1))
    sent = []
    agent.sender.send = lambda lines, replay_seconds: sent.append(list(lines))
    try:
        agent.round(1_800_000_000.0)
    finally:
        agent.collector.close()
        agent.sender.writer.close()
        agent.spool.close()
    (lines,) = sent
    assert [line.split(",", 1)[0] for line in lines] == ["node", "sensor"]
    bodies = [gzip.decompress(body).decode() for body, _ in encode_batches(lines, 1)]
    assert bodies == [f"{line}\n" for line in lines]  # in that order
