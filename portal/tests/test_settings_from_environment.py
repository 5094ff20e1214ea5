"""Settings read from the environment fail at start-up with the variable's name."""

from __future__ import annotations

import pytest

from portal.settings.env import SettingError, env_bool, env_int, env_rate, env_str


def test_a_bad_number_names_the_variable(monkeypatch):
    monkeypatch.setenv("OSTARA_TEST_PORT", "eighty")
    with pytest.raises(SettingError, match="OSTARA_TEST_PORT: expected a whole number"):
        env_int("OSTARA_TEST_PORT", 80)


def test_a_bad_boolean_names_the_variable(monkeypatch):
    monkeypatch.setenv("OSTARA_TEST_FLAG", "maybe")
    with pytest.raises(SettingError, match="OSTARA_TEST_FLAG"):
        env_bool("OSTARA_TEST_FLAG", False)


def test_a_bad_rate_names_the_variable_and_an_empty_one_is_no_limit(monkeypatch):
    monkeypatch.setenv("OSTARA_TEST_RATE", "lots/minute")
    with pytest.raises(SettingError, match="OSTARA_TEST_RATE: expected a rate"):
        env_rate("OSTARA_TEST_RATE", "3000/minute")
    monkeypatch.setenv("OSTARA_TEST_RATE", "")
    assert env_rate("OSTARA_TEST_RATE", "3000/minute") is None


def test_a_secret_can_come_from_a_file(monkeypatch, tmp_path):
    secret = tmp_path / "password"
    secret.write_text("s3cret\n")
    monkeypatch.setenv("EMAIL_HOST_PASSWORD_FILE", str(secret))
    assert env_str("EMAIL_HOST_PASSWORD", "") == "s3cret"


def test_an_unreadable_secret_file_is_an_error_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("EMAIL_HOST_PASSWORD_FILE", str(tmp_path / "missing"))
    with pytest.raises(SettingError, match="EMAIL_HOST_PASSWORD_FILE"):
        env_str("EMAIL_HOST_PASSWORD", "")


def test_a_missing_required_setting_is_named(monkeypatch):
    monkeypatch.delenv("OSTARA_NOT_SET", raising=False)
    with pytest.raises(SettingError, match="OSTARA_NOT_SET: required"):
        env_str("OSTARA_NOT_SET")
