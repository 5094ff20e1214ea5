"""The credentials key follows the run directory: a process whose run directory changes (a
restore into another one, a test's own) never goes on encrypting with the last one's key, which
the other processes of the appliance (the worker) could not read."""

from __future__ import annotations

import pytest

from portal.accounts import crypto


def test_each_run_directory_has_its_own_key(settings, tmp_path, monkeypatch):
    monkeypatch.delenv("OSTARA_CREDENTIALS_KEY", raising=False)
    settings.RUN_DIR = tmp_path / "first"
    token = crypto.encrypt("bmc-secret")
    settings.RUN_DIR = tmp_path / "second"
    with pytest.raises(crypto.CredentialError):
        crypto.decrypt(token)
    assert (tmp_path / "second" / "credentials.key").exists()
    settings.RUN_DIR = tmp_path / "first"
    assert crypto.decrypt(token) == "bmc-secret"
