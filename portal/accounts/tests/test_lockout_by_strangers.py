"""Issue 28, finding 2, on the running portal: a stranger who sends wrong passwords for a user name
slows down their own address, not the user. The user's right password from another address still
signs in, on the login page and the API's Basic auth; the stranger's address waits longer after
each further failure (429 with Retry-After on the API, a message on the page); every refusal is
in the audit log with its address, and an administrator lifts the limit in the Django admin.

The portal runs in production mode: the client's address is the last X-Forwarded-For entry,
the one nginx sets from the connection (nginx replaces whatever the client sent, see
deploy/production/nginx-ostara.conf.in). Each request here says its address the way nginx would,
so two "machines" talk to one live server on 127.0.0.1.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import requests
from django.db.models import F

from portal.accounts.models import LoginFailure
from portal.console.choices import Act
from portal.console.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)

STRANGER = "192.0.2.66"
ADMINS_DESK = "198.51.100.10"
LIMIT = 3


@pytest.fixture(autouse=True)
def behind_nginx(settings):
    settings.PRODUCTION = True  # read per request by client_address; nothing else changes
    settings.LOGIN_FAILURE_LIMIT = LIMIT
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 10
    settings.LOGIN_BACKOFF_SECONDS = 60
    settings.LOGIN_BACKOFF_MAX_SECONDS = 600
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 3600
    return settings


def from_address(address: str) -> requests.Session:
    session = requests.Session()
    session.headers["X-Forwarded-For"] = address  # as nginx sets it
    return session


def csrf_token(page: requests.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def sign_in(url: str, session: requests.Session, username: str, password: str):
    page = session.get(f"{url}/accounts/login/")
    form = {"csrfmiddlewaretoken": csrf_token(page), "username": username, "password": password}
    return session.post(f"{url}/accounts/login/", data=form, allow_redirects=False)


def api(url: str, session: requests.Session, username: str, password: str):
    return session.get(f"{url}/api/v1/", auth=(username, password))


def test_a_strangers_guesses_on_the_page_do_not_lock_the_admin_out(live_server, world):
    stranger = from_address(STRANGER)
    for _ in range(LIMIT + 2):
        assert sign_in(live_server.url, stranger, "admin", "guess").status_code == 200

    signed_in = sign_in(live_server.url, from_address(ADMINS_DESK), "admin", "pw-admin-123!")
    assert signed_in.status_code == 302, "the admin's right password from their desk signs in"

    refused = sign_in(live_server.url, stranger, "admin", "pw-admin-123!")
    assert refused.status_code == 200  # the form again, not the dashboard
    assert (
        "Too many failed sign-ins for user name &#x27;admin&#x27; from your address" in refused.text
    )
    assert re.search(r"try again in (1 minute|\d+ seconds)\.", refused.text)


def test_a_strangers_guesses_on_the_api_do_not_lock_the_admin_out(live_server, world):
    stranger = from_address(STRANGER)
    answers = [api(live_server.url, stranger, "admin", "guess") for _ in range(LIMIT + 2)]
    assert [answer.status_code for answer in answers] == [401] * (LIMIT - 1) + [429] * 3

    assert api(live_server.url, from_address(ADMINS_DESK), "admin", "pw-admin-123!").ok

    refused = api(live_server.url, stranger, "admin", "pw-admin-123!")
    assert refused.status_code == 429
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert "Too many failed sign-ins" in refused.json()["detail"]


def test_each_further_failure_from_the_strangers_address_doubles_the_wait(live_server, world):
    stranger = from_address(STRANGER)
    waits = []
    for _ in range(LIMIT + 2):
        answer = api(live_server.url, stranger, "admin", "guess")
        if answer.status_code == 429:
            waits.append(int(answer.headers["Retry-After"]))
            # The wait passes: the failures are made older rather than the test sleeping.
            LoginFailure.objects.update(created=F("created") - timedelta(seconds=waits[-1]))
    # 60, 120, 240 s from the failure (less the moment the answer took on a busy machine)
    assert len(waits) == 3
    for wait, doubled in zip(waits, (60, 120, 240), strict=True):
        assert doubled - 5 < wait <= doubled
    # Once it has passed, the right password signs in from there too.
    assert api(live_server.url, stranger, "admin", "pw-admin-123!").ok


def test_refusals_are_in_the_audit_log_with_the_address(live_server, world):
    stranger = from_address(STRANGER)
    for _ in range(LIMIT):
        sign_in(live_server.url, stranger, "admin", "guess")
    sign_in(live_server.url, stranger, "admin", "pw-admin-123!")
    api(live_server.url, stranger, "admin", "pw-admin-123!")

    refusals = AuditEntry.objects.filter(act=Act.SIGN_IN_REFUSED, object_name="admin")
    assert refusals.count() == LIMIT + 2
    assert set(refusals.values_list("remote_addr", flat=True)) == {STRANGER}
    assert set(refusals.values_list("via", flat=True)) == {"web", "api"}

    admin = from_address(ADMINS_DESK)
    sign_in(live_server.url, admin, "admin", "pw-admin-123!")
    log = admin.get(f"{live_server.url}/console/audit/", params={"act": Act.SIGN_IN_REFUSED})
    assert log.text.count(f'<tr data-act="{Act.SIGN_IN_REFUSED}">') == LIMIT + 2
    assert f"Web page {STRANGER}" in log.text and f"API {STRANGER}" in log.text
    assert "Too many failed sign-ins" in log.text


def test_the_admin_lifts_the_limit_in_the_django_admin(live_server, world):
    # The operator mistypes at their desk until refused, and asks the admin.
    operators_desk = from_address(STRANGER)
    for _ in range(LIMIT):
        sign_in(live_server.url, operators_desk, "operator", "typo")
    assert (
        sign_in(live_server.url, operators_desk, "operator", "pw-operator-123!").status_code == 200
    )

    admin = from_address(ADMINS_DESK)
    sign_in(live_server.url, admin, "admin", "pw-admin-123!")
    listing = admin.get(f"{live_server.url}/admin/accounts/loginfailure/")
    assert listing.status_code == 200 and STRANGER in listing.text
    lifted = admin.post(
        f"{live_server.url}/admin/accounts/loginfailure/",
        data={
            "csrfmiddlewaretoken": csrf_token(listing),
            "action": "lift_sign_in_limit",
            "_selected_action": list(LoginFailure.objects.values_list("pk", flat=True)),
            "index": 0,
        },
    )
    assert "Lifted the sign-in limit" in lifted.text

    assert (
        sign_in(live_server.url, operators_desk, "operator", "pw-operator-123!").status_code == 302
    )


def test_an_ipv6_client_counts_as_its_whole_64_so_a_new_address_per_guess_does_not_help(
    live_server, world
):
    guesses = [
        api(live_server.url, from_address(f"2001:db8:7:1::{n:x}"), "admin", "guess")
        for n in range(1, LIMIT + 2)
    ]
    assert [answer.status_code for answer in guesses] == [401] * (LIMIT - 1) + [429] * 2
    assert "your address (2001:db8:7:1::/64)" in guesses[-1].json()["detail"]

    # The next /64 is another client.
    assert api(live_server.url, from_address("2001:db8:7:2::1"), "admin", "pw-admin-123!").ok
