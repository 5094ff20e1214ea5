"""deploy/gunicorn.conf.py's worker hook: a worker has every view module loaded before it takes
its first request (Django would otherwise import them during it)."""

from __future__ import annotations

import subprocess
import sys

from deploy.tests.conftest import REPO, clean_environment

CHECK = """
import runpy, sys
import django
django.setup()
loaded = lambda: sorted(m for m in sys.modules if m.startswith("portal.") and m.endswith(".views"))
before = loaded()
runpy.run_path("deploy/gunicorn.conf.py")["post_worker_init"](None)
print(len(before), len(loaded()))
"""


def run_in_django(code: str, run_dir) -> str:
    """What ``code`` prints, run in a fresh interpreter with the portal's settings."""
    environment = clean_environment() | {
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "OSTARA_RUN_DIR": str(run_dir),
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_worker_loads_the_views_before_its_first_request(tmp_path):
    printed = run_in_django(CHECK, tmp_path)
    before, after = map(int, printed.split())
    assert before == 0
    # Every app with pages: health, inventory, alerts, analytics, jobs, console, wizard, …
    assert after >= 8, printed
