"""The production install's systemd units and nginx site, as the installer renders them, pass
systemd's and nginx's own checks; the installer refuses settings that would break them."""

from __future__ import annotations

import subprocess

import pytest

from deploy.tests.conftest import REPO, UNITS, nginx_command, nginx_conf, run_installer

SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze"


def test_systemd_accepts_every_unit(rendered):
    units = [str(rendered / f"{unit}.service") for unit in UNITS]
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
