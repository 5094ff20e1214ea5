"""The audit log records the address the request came from, not one the client claims."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory

from portal.console.services import Author


def _request(**meta):
    request = RequestFactory().post("/console/parameters/", REMOTE_ADDR="127.0.0.1", **meta)
    request.user = AnonymousUser()
    return request


def test_behind_nginx_the_address_is_the_one_nginx_added(settings):
    settings.PRODUCTION = True
    forged = _request(HTTP_X_FORWARDED_FOR="10.9.9.9, 192.0.2.7")
    assert Author.of_request(forged).remote_addr == "192.0.2.7"


def test_without_a_proxy_a_claimed_address_is_ignored(settings):
    settings.PRODUCTION = False
    forged = _request(HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert Author.of_request(forged).remote_addr == "127.0.0.1"
