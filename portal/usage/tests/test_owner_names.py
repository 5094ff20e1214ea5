"""The id -> name maps: the strict ``getent`` parser, the names page (an upload refused by line
stores nothing; only administrators change them) and the management server's own NSS."""

from __future__ import annotations

import grp
import html
import pwd

import pytest
from django.urls import reverse

from portal.usage import maths, services
from portal.usage.models import OwnerName

PASSWD = """root:x:0:0:root:/root:/bin/bash
alice:x:1000:1000:Alice Liddell,,,:/home/alice:/bin/bash
svc-backup$:*:1001:1001::/nonexistent:/usr/sbin/nologin
"""
GROUP = """root:x:0:
physics:x:2000:alice,bob
"""


def test_getent_passwd_and_group_give_each_id_its_name():
    assert maths.parse_getent(PASSWD, "passwd") == {0: "root", 1000: "alice", 1001: "svc-backup$"}
    assert maths.parse_getent(GROUP + "\n\n", "group") == {0: "root", 2000: "physics"}


def test_names_of_a_directory_and_an_id_listed_twice_keep_nss_first_answer():
    # `passwd: files sss`: getent lists a user of both; a directory's names have blanks and \.
    text = "domain users:*:5000:\nDOM\\ops:*:5001:\nlocal:x:5000:\n"
    repeats: list[str] = []
    assert maths.parse_getent(text, "group", repeats) == {5000: "domain users", 5001: "DOM\\ops"}
    assert repeats == ["line 3: gid 5000 ('local') kept 'domain users' of line 1"]


@pytest.mark.parametrize(
    ("text", "database", "line", "reason"),
    [
        ("root:x:0:0:root:/root:/bin/bash\nbob:x:1001\n", "passwd", 2, "3 fields separated"),
        (GROUP, "passwd", 1, "a getent passwd line has 7"),
        (PASSWD, "group", 1, "a getent group line has 4"),
        ("carol:x:12a:12:::\n", "passwd", 1, "the uid '12a' of 'carol' is not a number"),
        ("carol:x:-5:12:::\n", "passwd", 1, "the uid '-5' of 'carol' is not a number"),
        ("carol:x:4294967295:1:::\n", "passwd", 1, "above 4294967294"),
        ("a:x:1:\nb\x1bc:x:2:\n", "group", 2, "'b\\x1bc' is not a group name"),
        (":x:3:\n", "group", 1, "'' is not a group name"),
        (" a:x:3:\n", "group", 1, "' a' is not a group name"),
        (f"{'x' * 257}:x:3:\n", "group", 1, "is not a group name"),
        ("\n\n", "passwd", 1, "no entries"),
    ],
)
def test_a_malformed_getent_output_is_refused_naming_its_line(text, database, line, reason):
    with pytest.raises(maths.GetentError) as refused:
        maths.parse_getent(text, database)
    assert refused.value.line == line
    assert str(refused.value).startswith(f"line {line}: ")
    assert reason in str(refused.value)


@pytest.mark.django_db
def test_an_administrator_uploads_names_and_a_bad_line_stores_nothing(client, world):
    client.force_login(world["admin"])
    url = reverse("usage:names")
    answer = client.post(url, {"kind": "user", "source": "upload", "text": PASSWD})
    assert answer.status_code == 302
    assert services.names()["user"] == {"0": "root", "1000": "alice", "1001": "svc-backup$"}
    page = client.get(url).content.decode()
    assert "3 from uploaded getent output" in page
    # A group file with a broken third line: refused by line, the stored users untouched.
    bad = GROUP + "broken:x:abc:\n"
    answer = client.post(url, {"kind": "group", "source": "upload", "text": bad})
    assert answer.status_code == 200
    said = html.unescape(answer.content.decode())
    assert "line 3: the gid 'abc' of 'broken' is not a number" in said
    assert not OwnerName.objects.filter(kind="group").exists()
    assert OwnerName.objects.filter(kind="user").count() == 3
    # A site's whole passwd pasted (3 MiB, past Django's default body limit), one id twice.
    many = "".join(f"user{n:07d}:x:{n}:{n}:A user of the site,,,:/home/u{n}:/bin/bash\n"
                   for n in range(60_000))  # fmt: skip
    many += "again:x:7:7:::\n"
    assert len(many) > 3 * 2**20
    answer = client.post(url, {"kind": "user", "source": "upload", "text": many}, follow=True)
    said = html.unescape(answer.content.decode())
    assert "60,000 user names uploaded; 1 id listed again kept the first name" in said
    assert "line 60001: uid 7 ('again') kept 'user0000007' of line 8" in said
    # A new upload of users replaces the old names.
    client.post(url, {"kind": "user", "source": "upload", "text": "bob:x:1000:1000:::\n"})
    assert services.names()["user"] == {"1000": "bob"}


@pytest.mark.django_db
def test_names_read_from_the_management_servers_own_nss(client, world):
    client.force_login(world["admin"])
    client.post(reverse("usage:names"), {"kind": "group", "source": "nss"})
    stored = services.names()["group"]
    assert stored[str(grp.getgrnam("root").gr_gid)] == "root"
    assert len(stored) == len({entry.gr_gid for entry in grp.getgrall()})
    assert OwnerName.objects.filter(kind="group").first().source == "nss"
    client.post(reverse("usage:names"), {"kind": "user", "source": "nss"})
    assert services.names()["user"]["0"] == pwd.getpwuid(0).pw_name


@pytest.mark.django_db
def test_a_viewer_sees_the_names_page_but_changes_nothing(client, world):
    client.force_login(world["viewer"])
    url = reverse("usage:names")
    assert client.get(url).status_code == 200
    answer = client.post(url, {"kind": "user", "source": "upload", "text": PASSWD})
    assert answer.status_code == 403
    assert not OwnerName.objects.exists()
