"""Acceptance: a sensor writes for a while, the real InfluxDB is stopped for several intervals
and started again, and afterwards every series holds exactly one point per collection round:
nothing lost, nothing doubled.

The sensor runs as its own process (`python -m sensors run --config ...`) at a 1 s interval
over a server root built from the real 2.15 samples (see roots.py); the rounds it ran are
counted from its own log, independently of what reached InfluxDB.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sensors.tests.conftest import influx_ping, influx_query
from sensors.tests.roots import build_release_root

pytestmark = pytest.mark.services

REPO = Path(__file__).resolve().parents[2]
MEASUREMENTS = ("ost", "ost_job", "brw", "mdt", "oss_service", "node", "lnet", "sensor")


def write_config(path: Path, *, root: Path, url: str, database: str, spool: Path, server: str):
    path.write_text(
        "[sensor]\n"
        f"server = {server}\n"
        f"root = {root}\n"
        "interval = 1\n"
        "[tags]\n"
        "ssu = ssu01\n"
        "pair = pair01\n"
        "[influxdb]\n"
        f"url = {url}\n"
        f"database = {database}\n"
        "timeout = 2\n"
        "batch_size = 50\n"
        "[spool]\n"
        f"dir = {spool}\n"
    )
    return path


def start_sensor(config: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sensors", "-v", "run", "--config", str(config)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),  # noqa: SIM115 - closed with the process
    )


def stop_sensor(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def rounds_logged(log: Path) -> int:
    return sum(1 for row in log.read_text().splitlines() if " round " in row and "points" in row)


def spooled_batches(spool: Path) -> list[str]:
    return [name for name in os.listdir(spool) if name.endswith(".lp.gz")]


def counts_per_series(url: str, database: str, measurement: str) -> list[int]:
    """For every series of the measurement, the count of each of its fields."""
    counts = []
    for series in influx_query(url, f'SELECT count(*) FROM "{measurement}" GROUP BY *', database):
        row = series["values"][0]
        counts.extend(
            value
            for column, value in zip(series["columns"], row, strict=True)
            if column.startswith("count_") and value
        )
    return counts


def test_points_survive_an_influxdb_outage_exactly_once(tmp_path, influx_url, influx_db):
    from portal.conftest import run_services_script

    root = build_release_root(tmp_path / "root", "2.15")
    spool = tmp_path / "spool"
    log = tmp_path / "sensor.log"
    config = write_config(
        tmp_path / "sensor.conf",
        root=root,
        url=influx_url,
        database=influx_db,
        spool=spool,
        server="oss01",
    )
    sensor = start_sensor(config, log)
    try:
        wait_for(lambda: rounds_logged(log) >= 3, 30, "three rounds before the outage")
        run_services_script("stop", "influxdb")
        try:
            assert not influx_ping(influx_url)
            stopped_at = rounds_logged(log)
            wait_for(lambda: rounds_logged(log) >= stopped_at + 4, 30, "four rounds of outage")
            assert spooled_batches(spool), "the rounds of the outage were not spooled"
        finally:
            run_services_script("start", "influxdb")
        wait_for(lambda: not spooled_batches(spool), 60, "the spool to be replayed")
        replayed_at = rounds_logged(log)
        wait_for(lambda: rounds_logged(log) >= replayed_at + 2, 30, "two rounds after replay")
    finally:
        stop_sensor(sensor)
    rounds = rounds_logged(log)
    assert sensor.returncode == 0, log.read_text()[-2000:]
    assert rounds >= 9

    for measurement in MEASUREMENTS:
        counts = counts_per_series(influx_url, influx_db, measurement)
        assert counts, f"no {measurement} points"
        assert set(counts) == {rounds}, f"{measurement}: {sorted(set(counts))} != {rounds}"
    # the sensor saw the outage and lost nothing to it
    spooled = influx_query(
        influx_url, 'SELECT max("spooled_points"), last("dropped_points") FROM "sensor"', influx_db
    )
    _, max_spooled, dropped = spooled[0]["values"][0]
    assert max_spooled > 0 and dropped == 0
    assert "InfluxDB write failed, spooling" in log.read_text()
