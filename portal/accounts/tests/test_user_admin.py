"""Users and their roles are managed in the Django admin by the Admin role, and only by it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from portal.accounts.choices import Role
from portal.accounts.services import ensure_roles

pytestmark = pytest.mark.django_db


def member_of(role: str, **flags):
    ensure_roles()
    user = get_user_model().objects.create_user(
        username=f"plain-{role}", password="pw-plain-123!", **flags
    )
    user.groups.add(Group.objects.get(name=role))
    return user


def test_a_member_of_the_admin_group_adds_a_user_with_a_role_without_the_staff_flag(client):
    client.force_login(member_of(Role.ADMIN))
    assert client.get("/admin/auth/user/").status_code == 200
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "newcomer",
            "password1": "a-long-Passphrase-42",
            "password2": "a-long-Passphrase-42",
            "usable_password": "true",
        },
    )
    assert response.status_code == 302, response.content[:500]
    newcomer = get_user_model().objects.get(username="newcomer")
    edit = client.get(f"/admin/auth/user/{newcomer.pk}/change/")
    groups = edit.context["adminform"].form.fields["groups"].queryset
    assert {group.name for group in groups} == {role.value for role in Role}


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
def test_a_viewer_or_operator_is_kept_out_even_when_made_staff(client, role):
    client.force_login(member_of(role, is_staff=True))
    response = client.get("/admin/auth/user/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize(("role", "shown"), [(Role.ADMIN, True), (Role.OPERATOR, False)])
def test_the_navigation_links_the_admin_for_the_admin_role_only(client, role, shown):
    client.force_login(member_of(role, is_staff=not shown))
    page = client.get("/jobs/").content.decode()
    assert ('href="/admin/"' in page) is shown
