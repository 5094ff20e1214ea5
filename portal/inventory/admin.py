"""Admin pages of the inventory: read-mostly views of what the planner created."""

from __future__ import annotations

from django.contrib import admin

from portal.inventory import models


@admin.register(models.Filesystem)
class FilesystemAdmin(admin.ModelAdmin):
    list_display = ("name", "mgs_nids", "created")
    search_fields = ("name",)


class ServerInline(admin.TabularInline):
    model = models.Server
    fields = ("hostname", "role", "lnet_nids", "bmc_address", "pdu_outlet")
    extra = 0
    show_change_link = True


@admin.register(models.ServerPair)
class ServerPairAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "filesystem", "created")
    list_filter = ("kind", "filesystem")
    inlines = [ServerInline]
    exclude = ("plan",)


@admin.register(models.Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ("hostname", "role", "pair", "bmc_address", "pdu_outlet")
    list_filter = ("role", "pair__filesystem")
    search_fields = ("hostname",)
    # The password is stored encrypted and never shown; it is set through the wizard.
    exclude = ("bmc_password_encrypted",)


@admin.register(models.SSU)
class SSUAdmin(admin.ModelAdmin):
    list_display = ("name", "filesystem", "pair", "created")
    list_filter = ("filesystem",)


@admin.register(models.EnclosureModel)
class EnclosureModelAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "drawers", "slots_per_drawer", "controllers", "description")


class EnclosureInline(admin.TabularInline):
    model = models.Enclosure
    extra = 0


@admin.register(models.StorageArray)
class StorageArrayAdmin(admin.ModelAdmin):
    list_display = ("name", "pair", "drive_tb")
    inlines = [EnclosureInline]


@admin.register(models.VolumeGroup)
class VolumeGroupAdmin(admin.ModelAdmin):
    list_display = ("name", "array", "raid", "segment_kib", "controller", "state")
    list_filter = ("state", "array__pair")


@admin.register(models.Drive)
class DriveAdmin(admin.ModelAdmin):
    list_display = ("__str__", "size_tb", "state", "volume_group")
    list_filter = ("state", "enclosure__array")


@admin.register(models.Target)
class TargetAdmin(admin.ModelAdmin):
    list_display = (
        "label",
        "kind",
        "index",
        "volume_group",
        "primary_server",
        "failover_server",
        "current_server",
        "state",
    )
    list_filter = ("filesystem", "kind", "state")
    search_fields = ("label",)
