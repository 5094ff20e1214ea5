"""Acceptance: sensors write for a while, the real InfluxDB is stopped for several intervals
and started again, and afterwards every series holds exactly one point per collection round:
nothing lost, nothing doubled.

Each sensor runs as its own process (`python -m sensors run --config ...`); the rounds it ran
and the points of each round are counted from its own log, independently of what reached
InfluxDB. Two set-ups: one sensor at a 1 s interval over a server root built from the real
2.15 samples (every series is there in every round), and the four sensors of a virtual rack
of one SSU (simulator/, `serve` running its balanced workload: jobs come and go), with their
BMCs through ipmitool and the arrays through SMcli.
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
from sensors.tests.vrack import build_rack, host_config

pytestmark = [pytest.mark.services, pytest.mark.rack(seconds=60)]

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


def _round_rows(log: Path) -> list[str]:
    return [row for row in log.read_text().splitlines() if " round " in row and " points," in row]


def rounds_logged(log: Path) -> int:
    return len(_round_rows(log))


def points_logged(log: Path) -> int:
    """Points the sensor produced over all its rounds (`round N: P points, ...`)."""
    return sum(int(row.split(": ")[2].split()[0]) for row in _round_rows(log))


def spooled_batches(spool: Path) -> list[str]:
    return [name for name in os.listdir(spool) if name.endswith(".lp.gz")]


def counts_per_series(url: str, database: str, measurement: str, where: str = "") -> list[int]:
    """For every series of the measurement, the count of each of its fields."""
    counts = []
    statement = f'SELECT count(*) FROM "{measurement}" {where} GROUP BY *'
    for series in influx_query(url, statement, database):
        row = series["values"][0]
        counts.extend(
            value
            for column, value in zip(series["columns"], row, strict=True)
            if column.startswith("count_") and value
        )
    return counts


def points_per_series(url: str, database: str, measurement: str, where: str = "") -> list[int]:
    """For every series, its points: the count of its most frequent field (counters, once
    printed, stay printed, so some field is in every point of a series)."""
    points = []
    statement = f'SELECT count(*) FROM "{measurement}" {where} GROUP BY *'
    for series in influx_query(url, statement, database):
        row = zip(series["columns"], series["values"][0], strict=True)
        points.append(max(value or 0 for column, value in row if column.startswith("count_")))
    return points


def points_stored(url: str, database: str, server: str) -> int:
    """All points of one server in InfluxDB."""
    where = f"WHERE \"server\" = '{server}'"
    measurements = influx_query(url, "SHOW MEASUREMENTS", database)[0]["values"]
    return sum(sum(points_per_series(url, database, m, where)) for (m,) in measurements)


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


VIRTUAL_HOSTS = ("mds01", "mds02", "oss001", "oss002")


def test_virtual_rack_sensors_lose_and_double_nothing_over_an_outage(
    tmp_path, influx_url, influx_db
):
    from portal.conftest import run_services_script

    rack = build_rack(tmp_path / "rack")
    serve_log = open(tmp_path / "serve.log", "w")  # noqa: SIM115 - closed below
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simulator",
            "serve",
            "--rack",
            str(rack),
            "--interval",
            "1",
            "--scenario",
            "balanced",
        ],
        cwd=REPO,
        stdout=serve_log,
        stderr=subprocess.STDOUT,
    )
    sensors, logs = {}, {}
    try:
        for host in VIRTUAL_HOSTS:
            config = host_config(
                rack,
                host,
                tmp_path / f"{host}.conf",
                interval=5,  # the virtual ipmitool and SMcli take a second or two under load
                url=influx_url,
                database=influx_db,
                arrays=["ssu001-a", "ssu001-b"] if host == "oss001" else None,
            )
            logs[host] = tmp_path / f"{host}.log"
            sensors[host] = start_sensor(config, logs[host])

        def every(rounds: int) -> bool:
            return all(rounds_logged(log) >= rounds for log in logs.values())

        wait_for(lambda: every(3), 90, "three rounds of every sensor")
        run_services_script("stop", "influxdb")
        try:
            stopped_at = max(rounds_logged(log) for log in logs.values())
            wait_for(lambda: every(stopped_at + 3), 90, "three rounds of outage")
            spools = [tmp_path / f"{host}-spool" for host in VIRTUAL_HOSTS]
            assert all(spooled_batches(spool) for spool in spools)
        finally:
            run_services_script("start", "influxdb")
        wait_for(lambda: not any(spooled_batches(spool) for spool in spools), 90, "spools replayed")
        replayed_at = max(rounds_logged(log) for log in logs.values())
        wait_for(lambda: every(replayed_at + 1), 90, "a round after the replay")
    finally:
        for process in sensors.values():
            stop_sensor(process)
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        serve_log.close()

    for host in VIRTUAL_HOSTS:
        log = logs[host]
        assert sensors[host].returncode == 0, log.read_text()[-2000:]
        rounds = rounds_logged(log)
        # every point produced is stored once: jobs and brw buckets come and go, so count all
        assert points_stored(influx_url, influx_db, host) == points_logged(log), host
        # series that exist in every round hold exactly one point per round
        where = f"WHERE \"server\" = '{host}'"
        for measurement in ("node", "lnet", "sensor"):
            assert set(points_per_series(influx_url, influx_db, measurement, where)) == {rounds}
        assert points_per_series(influx_url, influx_db, "bmc", where), f"no BMC points of {host}"
    oss_rounds = rounds_logged(logs["oss001"])
    ost_points = points_per_series(influx_url, influx_db, "ost", "WHERE \"server\" = 'oss001'")
    assert len(ost_points) == 12 and set(ost_points) == {oss_rounds}
    assert counts_per_series(influx_url, influx_db, "ost_job", "WHERE \"server\" = 'oss001'")
    assert counts_per_series(influx_url, influx_db, "array", "WHERE \"server\" = 'oss001'")
    assert counts_per_series(influx_url, influx_db, "mdt", "WHERE \"server\" = 'mds01'")
