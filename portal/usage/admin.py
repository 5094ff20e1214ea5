from __future__ import annotations

from django.contrib import admin

from portal.usage.models import OwnerName


@admin.register(OwnerName)
class OwnerNameAdmin(admin.ModelAdmin):
    list_display = ("kind", "number", "name", "source", "updated")
    list_filter = ("kind", "source")
    search_fields = ("name",)
