from __future__ import annotations

from django.contrib import admin

from portal.console.models import AuditEntry, DriveReplacement, Maintenance


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read only: an audit log that can be edited is no audit log."""

    list_display = (
        "created",
        "username",
        "remote_addr",
        "act",
        "object_kind",
        "object_name",
        "job",
    )
    list_filter = ("act", "object_kind", "via")
    search_fields = ("username", "object_name", "summary")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Maintenance)
class MaintenanceAdmin(admin.ModelAdmin):
    list_display = ("server", "started", "ends", "ended", "created_by")
    readonly_fields = ("silence",)


@admin.register(DriveReplacement)
class DriveReplacementAdmin(admin.ModelAdmin):
    list_display = ("drive", "volume_group", "state", "progress", "created", "finished")
