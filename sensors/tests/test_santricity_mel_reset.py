"""An array's Major Event Log that starts again (cleared, or a controller replaced: numbers from 1
again) is read again from its start, and the collector says so once, against the virtual rack's
arrays API (`python -m simulator clear-mel`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from sensors.config import SantricityArray, SensorConfig
from sensors.rounds import Round
from sensors.santricity import EVENTS_FILE, SantricityCollector
from sensors.tests.lp import parse_lines, points_of
from sensors.tests.vrack import build_rack, simulator

ARRAY = "ssu001-a"
TS = 1_795_733_000_000


@pytest.fixture(scope="module")
def rack(tmp_path_factory):
    from simulator.santricity.server import ArraysApi

    root = build_rack(tmp_path_factory.mktemp("mel") / "rack")
    served = ArraysApi(root)
    served.start()
    yield root
    served.stop()


def collector_for(root: Path, spool: Path) -> SantricityCollector:
    """The array collector as provisioning configures it for ARRAY: its controllers' ports,
    each one's pinned certificate and the array's monitor account, as the rack recorded them."""
    record = json.loads((root / "rack.json").read_text())["arrays"][ARRAY]["management"]
    addresses = tuple(("127.0.0.1", record["controllers"][name]["port"]) for name in ("A", "B"))
    array = SantricityArray(
        ARRAY,
        addresses,
        tuple(record["controllers"][name]["sha256"] for name in ("A", "B")),
        user=record["user"],
        password=(root / record["password_file"]).read_text().strip(),
    )
    config = SensorConfig(
        server="mgmt01", spool_dir=str(spool), santricity_arrays=(array,), santricity_timeout=10.0
    )
    return SantricityCollector(config)


def event_sequences(collector: SantricityCollector, timestamp: int) -> list[int]:
    rnd = Round(timestamp, {"server": "mgmt01"})
    collector.collect(rnd)
    assert not rnd.errors, rnd.lines
    return sorted(p.fields["sequence"] for p in points_of(parse_lines(rnd.lines), "array_event"))


def test_a_cleared_event_log_is_read_again_from_its_start(rack, tmp_path, caplog):
    spool = tmp_path / "spool"
    collector = collector_for(rack, spool)
    simulator(rack, "inject", "controller-failed", "--array", ARRAY, "--controller", "B")
    simulator(rack, "clear", "--all")
    assert event_sequences(collector, TS) == [1, 2]  # controller B failed, then optimal
    assert json.loads((spool / EVENTS_FILE).read_text()) == {ARRAY: 2}
    simulator(rack, "inject", "controller-failed", "--array", ARRAY, "--controller", "B")
    assert event_sequences(collector, TS + 60_000) == [3]

    # The log is emptied; its next events are numbered from 1 again, below the last seen (3).
    said = simulator(rack, "clear-mel", "--array", ARRAY)
    assert said.startswith(f"cleared the event log of {ARRAY}: 3 events dropped")
    simulator(rack, "clear", "--all")
    with caplog.at_level(logging.WARNING, logger="sensors.santricity"):
        assert event_sequences(collector, TS + 120_000) == [1]
        assert json.loads((spool / EVENTS_FILE).read_text()) == {ARRAY: 1}
        # Its new events after that, as usual; the restart is said once.
        simulator(rack, "inject", "controller-failed", "--array", ARRAY, "--controller", "B")
        assert event_sequences(collector, TS + 180_000) == [2]
        assert event_sequences(collector, TS + 240_000) == []
        # Emptied again, nothing logged yet: every event from then on is new.
        simulator(rack, "clear-mel", "--array", ARRAY)
        assert event_sequences(collector, TS + 300_000) == []
        simulator(rack, "clear", "--all")  # controller B back: event 1 of the new log
        assert event_sequences(collector, TS + 360_000) == [1]
    restarts = [r.getMessage() for r in caplog.records if "started again" in r.getMessage()]
    assert restarts == [
        f"array {ARRAY}: its event log started again (cleared, or a controller replaced): "
        "event 3 is gone and nothing follows it; reading the new log from its start (1 event)",
        f"array {ARRAY}: its event log started again (cleared, or a controller replaced): "
        "event 2 is gone and nothing follows it; reading the new log from its start (0 events)",
    ]
    # A collector started afresh reads the number back and writes nothing twice.
    assert event_sequences(collector_for(rack, spool), TS + 420_000) == []


def test_clear_mel_names_an_unknown_array(rack):
    with pytest.raises(RuntimeError, match="unknown array 'ssu009-a' .*ssu001-a, ssu001-b"):
        simulator(rack, "clear-mel", "--array", "ssu009-a")
