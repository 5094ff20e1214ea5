"""The dashboard's guided tour: shown on a user's first visit, gone once closed, on every
device (it is remembered on the server), and for that user only."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

HEADING = "Welcome to Ostara: three things to know"


def test_the_tour_shows_until_closed_and_stays_closed(client, world):
    client.force_login(world["viewer"])
    page = client.get("/").content.decode()
    assert HEADING in page
    assert 'href="/ssus/add/"' in page  # how to add an SSU
    closed = client.post("/accounts/tour/dismiss/", HTTP_HX_REQUEST="true")
    assert closed.status_code == 200 and closed.content == b""
    assert HEADING not in client.get("/").content.decode()
    # another browser of the same user
    other = client.__class__()
    other.force_login(world["viewer"])
    assert HEADING not in other.get("/").content.decode()


def test_closing_is_per_user_and_needs_a_post(client, world):
    client.force_login(world["viewer"])
    client.post("/accounts/tour/dismiss/")
    assert client.get("/accounts/tour/dismiss/").status_code == 405
    client.force_login(world["operator"])
    assert HEADING in client.get("/").content.decode()


def test_without_htmx_closing_returns_to_the_dashboard(client, world):
    client.force_login(world["admin"])
    response = client.post("/accounts/tour/dismiss/")
    assert response.status_code == 302 and response["Location"] == "/"


def test_the_tour_links_the_analytics_that_exist(client, world):
    client.force_login(world["viewer"])
    page = client.get("/").content.decode()
    assert "coming too" not in page and "next release" not in page
    assert '<a href="/analytics/">Analytics</a> names the OSS that carries more' in page
    assert '<a href="/analytics/striping/">badly striped jobs</a>' in page
    assert client.get("/analytics/striping/").status_code == 200
