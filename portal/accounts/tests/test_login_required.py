"""Every page and API endpoint needs a login; the first admin gets a generated password."""

from __future__ import annotations

import stat

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_a_page_without_login_sends_you_to_the_login_page(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_the_api_without_login_answers_401_not_a_login_page(client):
    response = client.get("/api/v1/")
    assert response.status_code == 401
    assert response.json()["detail"]


def test_the_admin_pages_need_a_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_a_viewer_sees_the_dashboard_after_login(client, world):
    assert client.login(username="viewer", password="pw-viewer-123!")
    response = client.get("/")
    assert response.status_code == 200
    assert b"Appliance services" in response.content


def test_setup_creates_the_admin_with_a_generated_password_shown_once(tmp_path, settings, capsys):
    settings.RUN_DIR = tmp_path
    call_command("ostara_setup")
    first = capsys.readouterr().out
    password_file = tmp_path / "admin-password"
    password = password_file.read_text().strip()
    assert len(password) >= 16
    assert password in first
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    admin = get_user_model().objects.get(username="admin")
    assert admin.check_password(password)
    assert admin.groups.filter(name="admin").exists()

    call_command("ostara_setup")  # a second start keeps the account and does not print it
    second = capsys.readouterr().out
    assert password not in second
    assert str(password_file) in second
    assert get_user_model().objects.filter(username="admin").count() == 1


def test_two_setups_on_two_machines_do_not_share_a_password(tmp_path, settings):
    from portal.accounts.services import ensure_admin

    first = ensure_admin(tmp_path / "one").password
    get_user_model().objects.filter(username="admin").delete()
    second = ensure_admin(tmp_path / "two").password
    assert first and second and first != second


def test_roles_exist_after_setup(tmp_path, settings):
    from django.contrib.auth.models import Group

    settings.RUN_DIR = tmp_path
    call_command("ostara_setup")
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "operator", "admin"}
