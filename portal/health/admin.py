"""Admin pages of the health app: the thresholds and the retention (editable), the cached
colours and their history (read-only: the engine writes them)."""

from __future__ import annotations

from django.contrib import admin

from portal.health.models import HealthSettings, HealthStatus, RetentionSettings, StatusChange


@admin.register(HealthSettings)
class HealthSettingsAdmin(admin.ModelAdmin):
    list_display = ("__str__", "capacity_warning_percent", "capacity_critical_percent", "updated")

    def has_add_permission(self, request):
        return not HealthSettings.objects.exists()

    def has_delete_permission(self, request, obj=None):
        return False


admin.site.register(RetentionSettings)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(HealthStatus)
class HealthStatusAdmin(ReadOnlyAdmin):
    list_display = ("kind", "name", "status", "since")
    list_filter = ("kind", "status")
    search_fields = ("name",)


@admin.register(StatusChange)
class StatusChangeAdmin(ReadOnlyAdmin):
    list_display = ("at", "kind", "name", "old", "new", "processed")
    list_filter = ("kind", "new", "processed")
    search_fields = ("name",)
