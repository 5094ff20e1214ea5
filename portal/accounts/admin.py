"""Users and groups are managed through Django's own admin pages; the per-user preferences
beside them."""

from __future__ import annotations

from django.contrib import admin

from portal.accounts.choices import Role
from portal.accounts.models import Preferences
from portal.accounts.services import has_role


@admin.register(Preferences)
class PreferencesAdmin(admin.ModelAdmin):
    list_display = ("user", "tour_dismissed")


def _administrators_only(request) -> bool:
    """The Django admin, where users and their roles are managed, is for the Admin role: a
    member of the Admin group gets in without Django's staff flag set by hand, and a viewer or
    operator made staff does not."""
    return request.user.is_active and has_role(request.user, Role.ADMIN)


admin.site.has_permission = _administrators_only
