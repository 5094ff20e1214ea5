"""Encryption at rest for credentials the appliance must be able to use (BMC passwords).

Fernet (AES-128-CBC with HMAC-SHA256). The key is its own, not Django's SECRET_KEY, so rotating
sessions does not lose the credentials: ``OSTARA_CREDENTIALS_KEY`` (or ``_FILE``) when set,
else a key generated on first use and kept in the run directory (mode 0600).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from portal.settings.env import SettingError, env_str


class CredentialError(RuntimeError):
    """A stored credential cannot be decrypted with the configured key."""


def _fernet() -> Fernet:
    # Cached by where the key comes from: a changed run directory (a restore, a test's own)
    # never goes on using the key of the last one.
    return _fernet_for(env_str("OSTARA_CREDENTIALS_KEY", ""), str(settings.RUN_DIR))


def forget_key() -> None:
    """Read the key again at its next use (a restore has just replaced credentials.key)."""
    _fernet_for.cache_clear()


@lru_cache(maxsize=4)
def _fernet_for(key: str, run_dir: str) -> Fernet:
    if not key:
        key_file = Path(run_dir) / "credentials.key"
        if not key_file.exists():
            key_file.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(Fernet.generate_key())
        key = key_file.read_text().strip()
    try:
        return Fernet(key.encode())
    except ValueError as error:
        raise SettingError(f"OSTARA_CREDENTIALS_KEY: not a Fernet key ({error})") from None


def encrypt(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise CredentialError(
            "stored credential cannot be decrypted with the current key"
        ) from None
