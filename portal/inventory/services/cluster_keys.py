"""The Corosync authkey of each pair, kept among the appliance's secrets.

Generated once per pair, as `corosync-keygen` and `pcs cluster setup` make it (256 random
bytes), and never again while its file exists: a new key on one server would keep it out of
its own cluster. The file is ``RUN_DIR/corosync/corosync-authkey-<pair>`` (0600, its directory
0700), backed up with the other secrets of the run directory (portal.backup), and reaches the
servers as a secret file of the playbook run that corosync.yml copies byte for byte.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings

from provisioning.ha.corosync import AUTHKEY_BYTES

# The run directory's folder of cluster keys; portal.backup takes it whole.
KEY_DIR = "corosync"


def authkey_name(pair_name: str) -> str:
    return f"corosync-authkey-{pair_name}"


def authkey_path(pair_name: str) -> Path:
    return Path(settings.RUN_DIR) / KEY_DIR / authkey_name(pair_name)


def pair_authkey(pair_name: str) -> bytes:
    """The pair's authkey, made on first use and read back ever after."""
    path = authkey_path(pair_name)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        # O_EXCL: two workers provisioning the same pair never write two keys.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_bytes(AUTHKEY_BYTES))
    return path.read_bytes()
