"""A running sensor follows its configuration file: provisioning only writes files, and the
sensor starts again with them by itself (same process), keeps running on a configuration that
does not load, and stops with status 0 when its configuration is removed."""

from __future__ import annotations

import base64
import gzip
import http.server
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sensors.tests.lp import parse_lines, points_of
from sensors.tests.roots import build_release_root
from sensors.watch import CHANGED, GONE, UNCHANGED, ConfigWatch, password_files

REPO = Path(__file__).resolve().parents[2]


class InfluxStandIn:
    """InfluxDB's /write on 127.0.0.1: takes every batch (204) and records who sent it (the
    basic-auth credentials) and the `server` tag of its `sensor` point."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []
        received = self.writes

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = gzip.decompress(self.rfile.read(int(self.headers["Content-Length"])))
                credentials = self.headers.get("Authorization", "").removeprefix("Basic ")
                who = base64.b64decode(credentials).decode()
                for point in points_of(parse_lines(body.decode()), "sensor"):
                    received.append((who, point.tags["server"]))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def influxdb():
    stand_in = InfluxStandIn()
    yield stand_in
    stand_in.stop()


def write_atomically(path: Path, text: str) -> None:
    """As ansible's copy writes a file: a new file renamed over the old one."""
    new = path.with_name(f".{path.name}.new")
    new.write_text(text)
    os.replace(new, path)


def sensor_config(tmp_path: Path, url: str, server: str, interval: str = "0.5") -> str:
    return (
        f"[sensor]\nserver = {server}\nroot = {tmp_path / 'root'}\ninterval = {interval}\n"
        "collect = node\n"
        f"[influxdb]\nurl = {url}\nusername = sensor\npassword_file = {tmp_path / 'password'}\n"
        f"[spool]\ndir = {tmp_path / 'spool'}\n"
    )


def wait_for(condition, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_new_configuration_or_password_is_taken_by_the_same_process_and_removal_stops_it(
    tmp_path, influxdb
):
    build_release_root(tmp_path / "root", "2.15")
    config = tmp_path / "sensor.conf"
    (tmp_path / "password").write_text("first\n")
    config.write_text(sensor_config(tmp_path, influxdb.url, "oss01"))
    log = tmp_path / "sensor.log"
    with open(log, "w") as stderr:
        sensor = subprocess.Popen(
            [sys.executable, "-m", "sensors", "run", "--config", str(config)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        wait_for(lambda: ("sensor:first", "oss01") in influxdb.writes, "the first rounds")

        write_atomically(config, sensor_config(tmp_path, influxdb.url, "oss02"))
        wait_for(lambda: ("sensor:first", "oss02") in influxdb.writes, "the new server name")
        assert sensor.poll() is None  # the same process, executed again
        write_atomically(tmp_path / "password", "second\n")
        wait_for(lambda: ("sensor:second", "oss02") in influxdb.writes, "the new password")
        assert sensor.poll() is None
        text = log.read_text()
        assert text.count(f"configuration {config} changed: starting again with it") == 2
        assert "sensor oss01: root" in text and "sensor oss02: root" in text

        # A configuration that does not load is refused, once, and the sensor runs on.
        write_atomically(config, sensor_config(tmp_path, influxdb.url, "oss03", interval="-1"))
        wait_for(lambda: "running on with the one before" in log.read_text(), "the refusal")
        seen = len(influxdb.writes)
        wait_for(lambda: len(influxdb.writes) >= seen + 3, "rounds after the refusal")
        assert set(influxdb.writes[seen:]) == {("sensor:second", "oss02")}
        assert log.read_text().count("interval must be positive") == 1

        config.unlink()
        assert sensor.wait(timeout=30) == 0
        assert f"configuration {config} is gone: stopping" in log.read_text()
    finally:
        if sensor.poll() is None:
            sensor.kill()
            sensor.wait()


def test_a_file_rewritten_with_the_same_content_is_no_change(tmp_path):
    password = tmp_path / "array.password"
    password.write_text("secret\n")
    config = tmp_path / "collector.conf"
    config.write_text(
        "[sensor]\ncollect = santricity\n"
        f"[santricity]\narrays = a1\nuser = monitor\npassword_file = {password}\n"
        "[santricity.a1]\ncontrollers = 127.0.0.1:1\n"
        f"fingerprints = {'ab' * 32}\npassword_file = {tmp_path / 'a1.password'}\n"
    )
    (tmp_path / "a1.password").write_text("one\n")
    # Every password file, in whichever section names it.
    assert password_files(config.read_text()) == [tmp_path / "a1.password", password]
    watch = ConfigWatch(config)
    assert watch.files == [config, tmp_path / "a1.password", password]

    write_atomically(config, config.read_text())
    os.utime(password, (1, 1))
    assert not watch.changed() and watch.state == UNCHANGED

    write_atomically(tmp_path / "a1.password", "two\n")
    assert watch.changed() and watch.state == CHANGED

    config.unlink()
    assert watch.changed() and watch.state == GONE
