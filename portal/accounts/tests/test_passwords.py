"""A user changes their own password in the portal; an administrator who forgot theirs gets a new
generated one from ``manage.py ostara_password`` on the appliance, without a prompt."""

from __future__ import annotations

import stat

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def change_password(client, old: str, new: str):
    return client.post(
        "/accounts/password/",
        {"old_password": old, "new_password1": new, "new_password2": new},
    )


def test_the_user_menu_links_to_the_password_change(client, world):
    client.login(username="viewer", password="pw-viewer-123!")
    page = client.get("/").content.decode()
    assert 'href="/accounts/password/"' in page


def test_a_user_changes_their_password_and_their_other_sessions_end(client, world):
    elsewhere = Client()
    assert elsewhere.login(username="operator", password="pw-operator-123!")
    client.login(username="operator", password="pw-operator-123!")

    response = change_password(client, "pw-operator-123!", "a-Longer-pass-456")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/done/"
    assert "Password changed" in client.get(response["Location"]).content.decode()
    assert client.get("/").status_code == 200  # this session stays signed in
    assert elsewhere.get("/").status_code == 302  # the other is sent to the login page
    assert not Client().login(username="operator", password="pw-operator-123!")
    assert Client().login(username="operator", password="a-Longer-pass-456")


def test_a_wrong_old_password_is_refused_by_name_and_nothing_changes(client, world):
    client.login(username="viewer", password="pw-viewer-123!")
    response = change_password(client, "not-it", "a-Longer-pass-456")
    assert response.status_code == 200
    assert 'id="id_old_password-error"' in response.content.decode()
    assert Client().login(username="viewer", password="pw-viewer-123!")


def test_the_command_gives_a_new_password_shown_once_and_kept_privately(
    world, settings, tmp_path, capsys
):
    settings.RUN_DIR = tmp_path
    signed_in = Client()
    signed_in.login(username="admin", password="pw-admin-123!")

    call_command("ostara_password", "admin")

    password_file = tmp_path / "admin-password"
    password = password_file.read_text().strip()
    assert len(password) >= 16
    assert password in capsys.readouterr().out
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    assert Client().login(username="admin", password=password)
    assert not Client().login(username="admin", password="pw-admin-123!")
    assert signed_in.get("/").status_code == 302


def test_the_command_keeps_the_password_where_it_is_told(world, tmp_path, capsys):
    target = tmp_path / "secrets" / "viewer.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o644)
    call_command("ostara_password", "viewer", "--password-file", str(target))
    password = target.read_text().strip()
    assert password != "old"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert Client().login(username="viewer", password=password)


def test_an_unknown_user_is_named_and_nothing_is_written(world, settings, tmp_path):
    settings.RUN_DIR = tmp_path
    with pytest.raises(CommandError, match="username: no user 'nobody'"):
        call_command("ostara_password", "nobody")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_file_leaves_the_old_password_working(world, tmp_path):
    with pytest.raises(CommandError, match="--password-file: cannot write"):
        call_command("ostara_password", "viewer", "--password-file", str(tmp_path))
    assert Client().login(username="viewer", password="pw-viewer-123!")
