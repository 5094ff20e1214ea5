"""Users and groups are managed through Django's own admin pages; the per-user preferences
beside them."""

from __future__ import annotations

from django.contrib import admin

from portal.accounts.models import Preferences


@admin.register(Preferences)
class PreferencesAdmin(admin.ModelAdmin):
    list_display = ("user", "tour_dismissed")
