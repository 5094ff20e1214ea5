"""Guessing passwords is slowed down: after a few failed sign-ins for one user name from one
address, or many from one address, sign-in from that address is refused for a while, even with the
right password, on the login page, the admin's and the API's Basic auth alike, with a message that
says so. Other addresses are not concerned (test_lockout_by_strangers.py, on the running portal)."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client

from portal.accounts.models import LoginFailure

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def limits(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    settings.LOGIN_BACKOFF_SECONDS = 60
    settings.LOGIN_BACKOFF_MAX_SECONDS = 300
    return settings


def sign_in(client, username: str, password: str, **extra):
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


def basic(username: str, password: str) -> dict:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_after_too_many_failures_even_the_right_password_is_refused(client, world):
    for _ in range(2):
        page = sign_in(client, "operator", "guess").content.decode()
        assert "Your user name and password did not match" in page
    page = sign_in(client, "operator", "guess").content.decode()
    assert "Too many failed sign-ins for user name &#x27;operator&#x27; from your address" in page
    assert "try again in 1 minute" in page

    response = sign_in(client, "operator", "pw-operator-123!")
    assert response.status_code == 200  # the form again, not the dashboard
    assert "Too many failed sign-ins" in response.content.decode()
    # From another address the right password signs in: a guesser cannot lock a user out.
    assert (
        sign_in(Client(), "operator", "pw-operator-123!", REMOTE_ADDR="192.0.2.8").status_code
        == 302
    )
    # Other users are not locked out by someone guessing the operator's password.
    assert sign_in(Client(), "viewer", "pw-viewer-123!").status_code == 302


def test_the_limit_lifts_once_the_failures_age_out(client, world, limits):
    for _ in range(3):
        sign_in(client, "operator", "guess")
    LoginFailure.objects.update(
        created=LoginFailure.objects.first().created
        - timedelta(seconds=limits.LOGIN_FAILURE_WINDOW_SECONDS)
    )
    assert sign_in(client, "operator", "pw-operator-123!").status_code == 302


def test_a_successful_sign_in_starts_the_count_again(client, world):
    for _ in range(2):
        sign_in(client, "operator", "guess")
    assert sign_in(Client(), "operator", "pw-operator-123!").status_code == 302
    for _ in range(2):
        sign_in(client, "operator", "guess")
    assert sign_in(Client(), "operator", "pw-operator-123!").status_code == 302


def test_one_address_trying_many_names_is_refused_from_there_only(client, world):
    for number in range(6):
        sign_in(client, f"user{number}", "guess", REMOTE_ADDR="192.0.2.7")
    refused = sign_in(client, "viewer", "pw-viewer-123!", REMOTE_ADDR="192.0.2.7")
    assert "Too many failed sign-ins for your address (192.0.2.7)" in refused.content.decode()
    assert sign_in(Client(), "viewer", "pw-viewer-123!", REMOTE_ADDR="192.0.2.8").status_code == 302


def test_behind_nginx_the_address_nginx_saw_counts_not_the_one_claimed(client, world, settings):
    settings.PRODUCTION = True
    for number in range(6):
        # Each guess claims another address; nginx appends the real one.
        forwarded = f"198.51.100.{number}, 192.0.2.9"
        sign_in(client, f"user{number}", "guess", HTTP_X_FORWARDED_FOR=forwarded)
    assert set(LoginFailure.objects.values_list("address", flat=True)) == {"192.0.2.9"}
    refused = sign_in(client, "viewer", "pw-viewer-123!", HTTP_X_FORWARDED_FOR="192.0.2.9")
    assert "your address (192.0.2.9)" in refused.content.decode()


def test_the_api_answers_429_with_the_reason_and_when_to_come_back(client, world):
    for _ in range(2):
        assert client.get("/api/v1/", **basic("operator", "guess")).status_code == 401
    # The failure that reaches the limit already says so.
    assert client.get("/api/v1/", **basic("operator", "guess")).status_code == 429
    response = client.get("/api/v1/", **basic("operator", "pw-operator-123!"))
    assert response.status_code == 429
    assert "Too many failed sign-ins for user name 'operator'" in response.json()["detail"]
    assert 0 < int(response["Retry-After"]) <= 60
    assert client.get("/api/v1/", **basic("viewer", "pw-viewer-123!")).status_code == 200


def test_the_admin_login_is_limited_too(client, world):
    for _ in range(3):
        client.post("/admin/login/", {"username": "admin", "password": "guess"})
    response = client.post("/admin/login/", {"username": "admin", "password": "pw-admin-123!"})
    assert response.status_code == 200  # the form again
    assert client.get("/admin/").status_code == 302


def test_a_new_password_from_the_command_lifts_the_limit(client, world, tmp_path):
    for _ in range(3):
        sign_in(client, "admin", "guess")
    call_command("ostara_password", "admin", "--password-file", str(tmp_path / "pw"))
    password = (tmp_path / "pw").read_text().strip()
    assert sign_in(client, "admin", password).status_code == 302
