"""On an appliance's management network there is no internet: every page, the API documentation
included, loads its scripts and styles from the portal itself; and the API documentation needs a
login like every other page."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlparse

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

pytestmark = pytest.mark.django_db

PAGES = [
    "health:dashboard",
    "inventory:ssu-list",
    "jobs:job-list",
    "health:thresholds",
    "api-docs",
    "admin:index",
    "wizard:start",
]


class Assets(HTMLParser):
    """The URLs a page loads by itself: scripts, styles, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "img", "iframe") and attributes.get("src"):
            self.urls.append(attributes["src"])
        if tag == "link" and attributes.get("href"):
            self.urls.append(attributes["href"])


def loaded_urls(html: str) -> list[str]:
    parser = Assets()
    parser.feed(html)
    # Swagger UI's page names its bundle inside a script as well.
    parser.urls += re.findall(r"""["'](https?://[^"']+\.(?:js|css))["']""", html)
    return parser.urls


@pytest.mark.parametrize("url_name", PAGES)
def test_every_asset_of_a_page_is_served_by_the_portal(client, world, url_name):
    client.force_login(world["admin"])
    response = client.get(reverse(url_name), follow=True)
    assert response.status_code == 200
    urls = loaded_urls(response.content.decode())
    assert urls, "a page without a stylesheet or script?"
    for url in urls:
        parsed = urlparse(url)
        assert not parsed.netloc, f"{url_name} loads {url} from another host"
        if parsed.path.startswith("/static/"):
            assert finders.find(parsed.path.removeprefix("/static/")), f"{url} is missing"


def test_the_api_documentation_needs_a_login(client, world):
    docs = client.get(reverse("api-docs"))
    assert docs.status_code == 302 and docs["Location"].startswith("/accounts/login/")
    assert client.get(reverse("api-schema")).status_code == 401
    client.force_login(world["viewer"])
    assert client.get(reverse("api-schema")).status_code == 200
    page = client.get(reverse("api-docs")).content.decode()
    assert "swagger-ui" in page


def test_the_api_documentation_is_linked_from_every_page(client, world):
    client.force_login(world["viewer"])
    page = client.get(reverse("jobs:job-list")).content.decode()
    assert f'href="{reverse("api-docs")}"' in page
    # no entry for a section that does not exist in this version
    assert "Not installed in this version" not in page
