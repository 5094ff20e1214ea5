"""A server's kernel lines on a virtual rack whose servers run the product's sensor agent: every
Lustre and LNet line of the server's kernel log (its `dev/kmsg`) is one `kernel_log` point in
InfluxDB, none lost and none twice, across a restart of the server's sensor while its kernel
goes on logging.

The MDS's log is the one watched: an OSS crash logs there the MDT's lost connection to each OST
of the OSS (and its restored one when the partner serves it); the failback logs both again.
The sensor of mds01 is stopped once the crash's first lines were sent, the failback happens
while it is stopped, and the lines it logged then are read by the sensor started again; oss01
then crashes once more, its lines logged with the sensor running again.

A line sent twice at the same time with the same tags would be one point in InfluxDB; it is
told here by the sequence numbers (each line's own, a field of its point) and the points'
count: a line read again lands on another time or series whenever the round it is read in
starts elsewhere."""

from __future__ import annotations

import time

import pytest

from portal import influxdb as influx
from portal.health.tests.conftest import SENSOR_INTERVAL

pytestmark = [pytest.mark.services, pytest.mark.rack(seconds=40)]

PREFIXES = ("LustreError:", "Lustre:", "LNetError:")


def logged(virtual_rack, host: str) -> dict[int, str]:
    """The Lustre and LNet records of the kernel's own (facility 0) in the host's dev/kmsg, by
    sequence number."""
    text = (virtual_rack.root / "hosts" / host / "dev" / "kmsg").read_text()
    found = {}
    for record in text.splitlines():
        header, _, message = record.partition(";")
        priority, sequence = header.split(",")[:2]
        if int(priority) >> 3 == 0 and message.startswith(PREFIXES):
            found[int(sequence)] = message
    return found


def sent(host: str) -> list[tuple[int, str]]:
    """(sequence, message) of each kernel_log point of the host, oldest first."""
    rows = influx.query(
        'SELECT "sequence", "message" FROM "kernel_log" WHERE "server" = $server',
        {"server": host},
    )
    return [(int(row["sequence"]), row["message"]) for row in rows]


def until(condition, seconds: float, what) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"after {seconds:.0f} s: {what()}"
        time.sleep(0.5)


def test_a_restarted_sensor_neither_loses_nor_repeats_a_kernel_line(
    virtual_rack, metrics_db, tmp_path, settings
):
    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool")
    within = 6 * SENSOR_INTERVAL + 10
    # The boot's lines (Lustre's build version) first: the sensor is reading.
    until(lambda: sent("mds01"), within, lambda: "no kernel_log point of mds01")

    virtual_rack.inject("server-crash", server="oss01")
    lost = "Connection to scratch-OST0000 (at"
    until(
        lambda: any(lost in message for _, message in sent("mds01")),
        within,
        lambda: f"no line of the crash sent: {logged(virtual_rack, 'mds01')}",
    )
    config = virtual_rack.stop_agent("mds01")
    stopped_at = len(sent("mds01"))

    # While mds01's sensor is stopped: oss01 back, its OSTs failed back, mds01's MDT sees them
    # go and come back (the crash's own lines not all sent yet, maybe).
    virtual_rack.clear_all()
    virtual_rack.fail_back()
    # Each of the 12 OSTs lost at the crash, and again when it moved back.
    until(
        lambda: sum("was lost" in m for m in logged(virtual_rack, "mds01").values()) >= 24,
        within,
        lambda: f"the failback logged too little: {logged(virtual_rack, 'mds01')}",
    )
    assert len(sent("mds01")) == stopped_at  # nothing sent while stopped

    # Started again, and the kernel goes on: oss01 crashes once more.
    virtual_rack.start_agent(config)
    virtual_rack.inject("server-crash", server="oss01")
    until(
        lambda: sum("was lost" in m for m in logged(virtual_rack, "mds01").values()) >= 36,
        within,
        lambda: f"the second crash logged too little: {logged(virtual_rack, 'mds01')}",
    )
    until(
        lambda: len(sent("mds01")) >= len(logged(virtual_rack, "mds01")),
        within,
        lambda: f"{len(sent('mds01'))} of {len(logged(virtual_rack, 'mds01'))} lines sent",
    )
    virtual_rack.wait_rounds(2)  # a line sent twice would come within these rounds
    assert sorted(sent("mds01")) == sorted(logged(virtual_rack, "mds01").items())
