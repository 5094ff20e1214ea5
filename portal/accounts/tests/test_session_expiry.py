"""A signed-in session ends a working day after sign-in, and sooner when nobody asked for a page
for a while; the dashboard's own refreshes do not keep a forgotten browser signed in."""

from __future__ import annotations

import time

import pytest

from portal.accounts.middleware import SEEN_KEY, SIGNED_IN_KEY

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def signed_in(client, world):
    response = client.post("/accounts/login/", {"username": "viewer", "password": "pw-viewer-123!"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    return client, response


def shift(client, key: str, seconds_ago: int) -> None:
    session = client.session
    session[key] = int(time.time()) - seconds_ago
    session.save()


def test_the_session_cookie_lasts_a_working_day(signed_in, settings):
    _, response = signed_in
    assert settings.SESSION_COOKIE_AGE == 8 * 3600
    assert response.cookies["sessionid"]["max-age"] == 8 * 3600


def test_a_session_ends_a_working_day_after_sign_in_even_when_busy(signed_in, settings):
    client, _ = signed_in
    shift(client, SIGNED_IN_KEY, settings.SESSION_COOKIE_AGE + 1)
    shift(client, SEEN_KEY, 0)
    response = client.get("/jobs/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/jobs/"
    assert "Your session expired" in client.get(response["Location"]).content.decode()
    assert client.get("/").status_code == 302  # signed out for good, not for one request


def test_an_idle_session_ends(signed_in, settings):
    client, _ = signed_in
    shift(client, SEEN_KEY, settings.SESSION_IDLE_SECONDS + 1)
    assert client.get("/").status_code == 302


def test_a_page_asked_for_keeps_it_alive_but_a_refresh_does_not(signed_in, settings):
    client, _ = signed_in
    shift(client, SEEN_KEY, settings.SESSION_IDLE_SECONDS - 120)
    assert client.get("/health/services/", **HTMX).status_code == 200
    assert client.session[SEEN_KEY] < time.time() - settings.SESSION_IDLE_SECONDS + 130
    assert client.get("/jobs/").status_code == 200
    assert client.session[SEEN_KEY] >= time.time() - 5


def test_a_refreshing_panel_of_an_expired_session_sends_the_page_to_sign_in(signed_in, settings):
    client, _ = signed_in
    shift(client, SEEN_KEY, settings.SESSION_IDLE_SECONDS + 1)
    response = client.get("/health/services/", **HTMX)
    assert response.status_code == 204
    assert response["HX-Redirect"] == "/accounts/login/?next=/"


def test_without_an_idle_limit_only_the_working_day_counts(signed_in, settings):
    client, _ = signed_in
    settings.SESSION_IDLE_SECONDS = 0
    shift(client, SEEN_KEY, 7 * 3600)
    assert client.get("/").status_code == 200
