"""The `[santricity]` section of the sensor's configuration: the arrays, their controllers'
addresses, how their certificates are verified, the monitor account."""

from __future__ import annotations

import pytest

from sensors.config import ConfigError, SantricityArray, load_config

FINGERPRINT = "3f" * 32
OTHER = "4e" * 32


def write(tmp_path, text: str):
    (tmp_path / "monitor.pass").write_text("s3cret\n")
    (tmp_path / "ssu01-b.pass").write_text("other s3cret\n")
    (tmp_path / "site-ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    path = tmp_path / "sensor.conf"
    path.write_text(
        "[sensor]\nserver = mgmt01\ncollect = santricity\n" + text.replace("DIR", str(tmp_path))
    )
    return path


GOOD = f"""
[santricity]
arrays = ssu01-a ssu01-b
user = monitor
password_file = DIR/monitor.pass
interval = 60
timeout = 15

[santricity.ssu01-a]
controllers = 127.0.0.1:40001 127.0.0.1:40002
fingerprints = {":".join(FINGERPRINT[i : i + 2].upper() for i in range(0, 64, 2))} {OTHER}

[santricity.ssu01-b]
controllers = ssu01-b-a ssu01-b-b:8443
ca_file = DIR/site-ca.pem
user = monitor-b
password_file = DIR/ssu01-b.pass
"""


def test_the_arrays_their_controllers_and_how_they_are_trusted(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert "s3cret" not in repr(config)
    assert (config.interval_of("santricity"), config.timeout_of("santricity")) == (60.0, 15.0)
    # Each controller's own pin, in the order of the controllers; each array's own account
    # (ssu01-a takes [santricity]'s).
    assert config.santricity_arrays == (
        SantricityArray(
            "ssu01-a",
            (("127.0.0.1", 40001), ("127.0.0.1", 40002)),
            fingerprints=(FINGERPRINT, OTHER),
            user="monitor",
            password="s3cret",
        ),
        SantricityArray(
            "ssu01-b",
            (("ssu01-b-a", 8443), ("ssu01-b-b", 8443)),
            ca_file=str(tmp_path / "site-ca.pem"),
            user="monitor-b",
            password="other s3cret",
        ),
    )


def test_a_controller_not_pinned_yet_is_written_as_a_dash(tmp_path):
    text = GOOD.replace(f" {OTHER}", " -")
    (array, _) = load_config(write(tmp_path, text)).santricity_arrays
    assert array.fingerprints == (FINGERPRINT, "")


def test_the_defaults(tmp_path):
    config = load_config(write(tmp_path, ""))
    assert config.santricity_arrays == ()
    assert config.interval_of("santricity") == 60.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("arrays = ssu01-a ssu01-b", "arrays = ssu01-a ssu01-c"), "no [santricity.ssu01-c]"),
        (("user = monitor\n", ""), "[santricity.ssu01-a] user"),
        (("password_file = DIR/monitor.pass", "password_file = DIR/none"), "password_file"),
        (
            ("password_file = DIR/ssu01-b.pass", "password_file = DIR/none"),
            "[santricity.ssu01-b] password_file",
        ),
        (("fingerprints = ", "fingerprint = "), "give fingerprints = <A's> <B's>"),
        ((f" {OTHER}", ""), "fingerprints: give one per controller"),
        ((f" {OTHER}", f" {OTHER} {OTHER}"), "fingerprints: give one per controller"),
        (("interval = 60", "interval = soon"), "[santricity] interval"),
        (
            ("controllers = 127.0.0.1:40001 127.0.0.1:40002", "controllers = 127.0.0.1:port"),
            "[santricity.ssu01-a] controllers",
        ),
        (
            ("controllers = 127.0.0.1:40001 127.0.0.1:40002", "controllers ="),
            "[santricity.ssu01-a] controllers",
        ),
        (("fingerprints = ", "fingerprints = abc12 "), "not a SHA-256 fingerprint"),
        (
            ("ca_file = DIR/site-ca.pem", "ca_file = DIR/nothing.pem"),
            "[santricity.ssu01-b] ca_file",
        ),
        (("ca_file = DIR/site-ca.pem", ""), "[santricity.ssu01-b] give either fingerprints"),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(tmp_path, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(ConfigError) as refused:
        load_config(write(tmp_path, GOOD.replace(old, new)))
    assert message.replace("DIR", str(tmp_path)) in str(refused.value)
