"""The settings `make test` runs the portal with: the product's own, with a fast password hash.

PBKDF2 costs about a second a password on these machines by design, and every test user, login
and Basic-auth request paid it: minutes of the suite. The test settings hash with MD5 first
(never shipped: only pytest and the processes it starts, which inherit DJANGO_SETTINGS_MODULE,
load this module) and keep the product's hashers after it, so a password the product hashed
still checks."""

import os
from pathlib import Path

from django.conf import global_settings

APPLIED = "OSTARA_TEST_WORKER_ENVIRONMENT"


def _worker_environment() -> None:
    """In a pytest-xdist worker of deploy/test.sh, its own services and run directory: the
    variables of its file, before the product's settings read them (pytest-django loads this
    module first in each worker; the processes a test starts inherit them)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = os.environ.get("OSTARA_TEST_WORKERS_DIR")
    # Once, in the worker: a process it starts inherits the variables, and keeps those the test
    # gave it instead (a restore into a run directory of its own, say).
    if not worker or not folder or os.environ.get(APPLIED) == worker:
        return
    for line in (Path(folder) / f"{worker}.env").read_text().splitlines():
        name, _, value = line.partition("=")
        os.environ[name] = value
    os.environ[APPLIED] = worker


_worker_environment()

from portal.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.MD5PasswordHasher",
    *global_settings.PASSWORD_HASHERS,
]
