"""The sensor's configuration file, its command line, and the files provisioning installs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sensors.config import ConfigError, load_config
from sensors.tests.lp import parse_lines, points_of
from sensors.tests.roots import build_release_root

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "sensors" / "deploy"


def test_the_example_config_loads():
    config = load_config(DEPLOY / "sensor.conf.example")
    assert config.server == "oss01"
    assert config.interval == 10.0
    assert config.tags == {"ssu": "ssu01", "pair": "ssu01"}
    assert config.static_tags() == {"ssu": "ssu01", "pair": "ssu01", "server": "oss01"}
    assert config.influxdb_url == "http://mgmt01:8086"
    assert config.spool_dir == "/var/lib/ostara-sensor/spool"
    assert config.bmc_command == "ipmitool sensor"
    assert config.array_command == ""


def test_defaults_from_a_minimal_file(tmp_path):
    path = tmp_path / "sensor.conf"
    path.write_text("[influxdb]\nurl = http://127.0.0.1:8086/\n")
    config = load_config(path)
    assert config.interval == 10.0 and config.root == "/"
    assert config.influxdb_url == "http://127.0.0.1:8086"
    assert config.batch_size == 5000 and config.database == "ostara"


def test_password_from_a_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    path = tmp_path / "sensor.conf"
    path.write_text(f"[influxdb]\nusername = sensor\npassword_file = {secret}\n")
    assert load_config(path).password == "s3cret"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sensor]\ninterval = 0\n", "interval must be positive"),
        ("[sensor]\ninterval = often\n", "is not a number"),
        ("[sensor]\ncollect = ost, disks\n", "unknown disks"),
        ("[sensor]\nserver = oss 01\n", "not a valid host name"),
        ("[tags]\ntarget = OST0000\n", "not allowed as a static tag"),
        ("[tags]\nssu = two words\n", "not a valid value"),
        ("[influxdb]\nurl = influx:8086\n", "must be http(s)://"),
        ("[influxdb]\npassword_file = /nonexistent/secret\n", "password_file"),
        ("[sensor\n", "sensor.conf"),
    ],
)
def test_bad_values_stop_the_sensor_with_a_clear_message(tmp_path, text, message):
    path = tmp_path / "sensor.conf"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path)


def test_collect_once_prints_one_round_of_line_protocol(tmp_path):
    root = build_release_root(tmp_path, "2.15")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sensors",
            "collect",
            "--root",
            str(root),
            "--once",
            "--format",
            "line",
            "--server",
            "oss07",
            "--tag",
            "ssu=ssu04",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    points = parse_lines(result.stdout)
    assert {p.timestamp for p in points} == {points[0].timestamp}  # one timestamp per round
    (ost,) = points_of(points, "ost", target="OST0001")
    assert ost.tags == {"fs": "lflood", "target": "OST0001", "server": "oss07", "ssu": "ssu04"}
    assert ost.fields["write_bytes"] == 1786842710016
    (sensor,) = points_of(points, "sensor")
    assert sensor.fields["parse_errors"] == 0
    assert sensor.fields["points"] == len(points) - 1
    assert result.stderr == ""


def test_run_with_a_bad_config_exits_2_with_the_reason(tmp_path):
    path = tmp_path / "sensor.conf"
    path.write_text("[sensor]\ninterval = -1\n")
    result = subprocess.run(
        [sys.executable, "-m", "sensors", "run", "--config", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "interval must be positive" in result.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_the_systemd_unit_is_valid(tmp_path):
    unit = tmp_path / "ostara-sensor.service"
    shutil.copy(DEPLOY / "ostara-sensor.service", unit)
    result = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    text = unit.read_text()
    assert "ExecStart=/usr/bin/python3 -m sensors run --config /etc/ostara/sensor.conf" in text
    assert "Restart=always" in text and "StateDirectory=ostara-sensor" in text
