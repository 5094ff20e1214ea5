"""The production install's systemd units and nginx site, as the installer renders them, pass
systemd's and nginx's own checks; the installer refuses settings that would break them. The
arrays' collector unit runs this checkout's sensor program as the services' user and writes its
own directory only."""

from __future__ import annotations

import os
import pwd
import subprocess
import time

import pytest

from deploy.tests.conftest import (
    ARRAYS_UNITS,
    REPO,
    UNITS,
    nginx_command,
    nginx_conf,
    read_only_but,
    run_installer,
    unit_command,
)

SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze"


def test_systemd_accepts_every_unit(rendered):
    units = [str(rendered / f"{unit}.service") for unit in UNITS]
    units += [str(rendered / unit) for unit in ARRAYS_UNITS]
    checked = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", *units],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Without systemd as PID 1 it may still talk about the machine's own units: ours only count.
    ours = [
        line for line in checked.stderr.splitlines() if "ostara-" in line or str(rendered) in line
    ]
    assert checked.returncode == 0, checked.stderr
    assert ours == []


def test_the_units_run_the_virtualenv_of_this_checkout_as_the_ostara_user(rendered):
    for unit in UNITS:
        text = (rendered / f"{unit}.service").read_text()
        assert f"ExecStart={REPO}/.venv/bin/" in text
        assert f"ReadWritePaths={rendered / 'run'}" in text
        assert f"EnvironmentFile={rendered / 'ostara.env'}" in text


def test_nginx_accepts_the_site(rendered):
    tested = subprocess.run(
        nginx_command(nginx_conf(rendered), "-t"), capture_output=True, text=True, timeout=60
    )
    assert tested.returncode == 0, tested.stderr
    assert "test is successful" in tested.stderr
    assert "[warn]" not in tested.stderr, tested.stderr


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("OSTARA_SERVER_NAME", "ostara.example.org; rm -rf /"),
        ("OSTARA_USER", "Ostara Admin"),
        ("OSTARA_RUN_DIR", "var/lib/ostara"),
        ("OSTARA_PORTAL_BIND", "0.0.0.0:8480"),
        ("OSTARA_HTTPS_LISTEN", "443 ssl; include /etc/shadow"),
        ("REDIS_URL", "redis://127.0.0.1:6379/0#x"),
    ],
)
def test_the_installer_refuses_a_setting_that_would_reach_a_template_unchecked(
    tmp_path, setting, value
):
    refused = run_installer("render", str(tmp_path / "out"), **{setting: value})
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"{setting}: '{value}' is not ")
    assert not (tmp_path / "out").exists()


def _settings(unit_text: str) -> dict[str, str]:
    return dict(
        line.split("=", 1) for line in unit_text.splitlines() if "=" in line and line[0] != "#"
    )


def test_the_arrays_collector_runs_from_this_checkout_as_the_user_and_writes_only_its_directory(
    rendered,
):
    arrays = rendered / "run" / "arrays"
    config = arrays / "collector.conf"
    unit = _settings((rendered / "ostara-arrays.service").read_text())
    assert unit["User"] == unit["Group"] == pwd.getpwuid(os.geteuid()).pw_name
    assert unit["ExecStart"] == f"{REPO}/.venv/bin/python -m sensors run --config {config}"
    assert unit["ReadWritePaths"] == str(arrays)
    assert unit["ConditionPathExists"] == str(config)
    assert (unit["ProtectSystem"], unit["Restart"]) == ("strict", "on-failure")
    path = _settings((rendered / "ostara-arrays.path").read_text())
    assert (path["PathExists"], path["Unit"]) == (str(config), "ostara-arrays.service")

    # As provisioning leaves it: one array (its controllers silent), InfluxDB away, so every
    # round goes to the spool in the unit's directory.
    arrays.mkdir(mode=0o700)
    (arrays / "monitor.password").write_text("monitor-secret\n")
    config.write_text(
        "[sensor]\nserver = mgmt01\ninterval = 0.5\ncollect = santricity\n"
        "[influxdb]\nurl = http://127.0.0.1:1\n"
        f"[spool]\ndir = {arrays / 'spool'}\n"
        "[santricity]\narrays = a1\nuser = monitor\n"
        f"password_file = {arrays / 'monitor.password'}\n"
        f"[santricity.a1]\ncontrollers = 127.0.0.1:1 127.0.0.1:2\n"
        f"fingerprints = {'ab' * 32} {'cd' * 32}\n"
    )
    argv, environment, directory = unit_command(rendered / "ostara-arrays.service")
    log = rendered / "log" / "ostara-arrays.log"
    with open(log, "wb") as output:
        collector = subprocess.Popen(
            [*read_only_but(arrays), *argv],
            cwd=directory,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while not list((arrays / "spool").glob("*.lp.gz")):
            assert collector.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        # Provisioning removes the configuration: the collector stops by itself, with 0, so
        # Restart=on-failure leaves it stopped until the path unit sees a configuration again.
        config.unlink()
        assert collector.wait(timeout=30) == 0, log.read_text()
    finally:
        if collector.poll() is None:
            collector.kill()
            collector.wait()
    assert "is gone: stopping" in log.read_text()
