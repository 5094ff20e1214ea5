"""A production appliance (OSTARA_PRODUCTION=true, behind nginx over HTTPS) passes Django's
deployment checklist; the demo's plain-HTTP settings do not, so the check can fail.

Settings are read once at start-up, so each case runs ``manage.py`` in its own process with the
environment a systemd unit would give it."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# What a browser notices of the production settings, asked through Django's test client.
PROBE = """
import json
from django.test import Client
client = Client()
plain = client.get("/accounts/login/")
secure = client.get("/accounts/login/", headers={"x-forwarded-proto": "https"})
probe = client.get("/healthz")
print(json.dumps({
    "plain_status": plain.status_code,
    "plain_location": plain.get("Location", ""),
    "secure_status": secure.status_code,
    "hsts": secure.get("Strict-Transport-Security", ""),
    "csrf_cookie_secure": bool(secure.cookies["csrftoken"]["secure"]),
    "frame": secure.get("X-Frame-Options", ""),
    "nosniff": secure.get("X-Content-Type-Options", ""),
    "healthz_status": probe.status_code,
}))
"""


def _manage(tmp_path: Path, *args: str, **environment: str) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OSTARA_", "DJANGO_", "DATABASE_URL"))
    }
    env.update(
        OSTARA_RUN_DIR=str(tmp_path / "run"),
        OSTARA_SECRET_KEY=secrets.token_urlsafe(50),
        OSTARA_ALLOWED_HOSTS="ostara.example.net,testserver",
        **environment,
    )
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_in_production(tmp_path):
    result = _manage(
        tmp_path, "check", "--deploy", "--fail-level", "WARNING", OSTARA_PRODUCTION="true"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_about_the_demo_settings(tmp_path):
    result = _manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr


def test_production_sends_browsers_to_https_and_pins_it(tmp_path):
    result = _manage(tmp_path, "shell", "-c", PROBE, OSTARA_PRODUCTION="true")
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["plain_status"] == 301
    assert seen["plain_location"] == "https://testserver/accounts/login/"
    assert seen["secure_status"] == 200
    assert seen["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert seen["csrf_cookie_secure"]
    assert seen["frame"] == "DENY"
    assert seen["nosniff"] == "nosniff"
    # A monitoring probe on the appliance itself asks gunicorn over plain HTTP.
    assert seen["healthz_status"] in (200, 503)


def test_debug_cannot_be_on_in_production(tmp_path):
    result = _manage(tmp_path, "check", OSTARA_PRODUCTION="true", OSTARA_DEBUG="true")
    assert result.returncode != 0
    assert "OSTARA_DEBUG: must be off when OSTARA_PRODUCTION is on" in result.stderr
