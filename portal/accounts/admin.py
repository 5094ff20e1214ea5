"""Users and groups are managed through Django's own admin pages; the per-user preferences
beside them, and the recent failed sign-ins, where an administrator lifts the sign-in limit."""

from __future__ import annotations

from django.contrib import admin, messages

from portal.accounts.choices import Role
from portal.accounts.models import LoginFailure, Preferences
from portal.accounts.services import forget_login_failures, has_role


@admin.register(Preferences)
class PreferencesAdmin(admin.ModelAdmin):
    list_display = ("user", "tour_dismissed")


@admin.register(LoginFailure)
class LoginFailureAdmin(admin.ModelAdmin):
    """Who failed to sign in, from where: the addresses the limit slows down. Lifting the limit
    forgets every failure of the selected user names from the selected addresses."""

    list_display = ("created", "username", "address")
    list_filter = ("address",)
    search_fields = ("username", "address")
    actions = ("lift_sign_in_limit",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Lift the sign-in limit of these user names from these addresses")
    def lift_sign_in_limit(self, request, queryset) -> None:
        pairs = set(queryset.values_list("username", "address"))
        forgotten = sum(forget_login_failures(username, address) for username, address in pairs)
        names = ", ".join(sorted(f"{username!r} from {address}" for username, address in pairs))
        self.message_user(
            request,
            f"Lifted the sign-in limit of {names}: {forgotten} failed sign-ins forgotten.",
            messages.SUCCESS,
        )


def _administrators_only(request) -> bool:
    """The Django admin, where users and their roles are managed, is for the Admin role: a
    member of the Admin group gets in without Django's staff flag set by hand, and a viewer or
    operator made staff does not."""
    return request.user.is_active and has_role(request.user, Role.ADMIN)


admin.site.has_permission = _administrators_only
