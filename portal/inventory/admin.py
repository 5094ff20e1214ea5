"""Admin pages of the inventory: read-mostly views of what the planner created.

The rows are the one truth of a pair: each provisioning run builds its Pacemaker configuration,
array layout and playbook variables from them (``services.pair_plan``). What a run can apply to
a built pair, the fence devices of a server (BMC address and user, PDU outlet), can be changed
here, through ``Server.clean`` like every other way in; what it cannot (names written into the
formatted targets, NIDs, the arrays' layout) is shown read-only.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from portal.inventory import models
from portal.inventory.provisioning import KIND as PROVISIONING
from portal.jobs.models import Job

# The fields of a server a provisioning run can apply to a built pair, as an admin names them.
FENCING_LABELS = {
    "bmc_address": "BMC address",
    "bmc_username": "BMC user",
    "pdu_outlet": "PDU outlet",
}
FENCING_FIELDS = tuple(FENCING_LABELS)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shown, never changed here: the planner made these rows and the targets carry them."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.Filesystem)
class FilesystemAdmin(ReadOnlyAdmin):
    list_display = ("name", "mgs_nids", "created")
    search_fields = ("name",)


class ServerInline(admin.TabularInline):
    """The pair's servers; their fence devices are changed on each server's own page."""

    model = models.Server
    fields = ("hostname", "role", "lnet_nids", "bmc_address", "pdu_outlet")
    readonly_fields = fields
    extra = 0
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.ServerPair)
class ServerPairAdmin(ReadOnlyAdmin):
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
    fieldsets = (
        (
            "Fence devices",
            {
                "fields": FENCING_FIELDS,
                "description": "The pair's cluster fences this server through its BMC, then its "
                "PDU outlet, and its partner's sensor polls the same BMC. A change reaches both "
                "when the pair's provisioning job runs again.",
            },
        ),
        (
            "Built into the targets",
            {
                "fields": ("hostname", "role", "pair", "lnet_nids"),
                "description": "The formatted targets carry these names and NIDs; they are "
                "changed by rebuilding the pair, not here.",
            },
        ),
    )
    readonly_fields = ("hostname", "role", "pair", "lnet_nids")

    def has_add_permission(self, request) -> bool:
        return False  # servers come with their pair, from the wizard or `manage.py provision`

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_form(self, request, obj=None, **kwargs):
        return super().get_form(request, obj, labels=FENCING_LABELS, **kwargs)

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        changed = [label for name, label in FENCING_LABELS.items() if name in form.changed_data]
        if not (change and changed and obj.pair_id):
            return
        job = Job.objects.filter(kind=PROVISIONING, pairs=obj.pair_id).order_by("-pk").first()
        url = reverse("jobs:job-detail", args=[job.pk]) if job else ""
        where = (
            format_html('run <a href="{}">job #{}</a> again', url, job.pk)
            if job
            else "run its provisioning job again"
        )
        messages.warning(
            request,
            format_html(
                "{} of {} changed. The cluster of {} keeps its fence devices, and the partner's "
                "sensor polls the BMC it polled, until you {}: that run pushes a Pacemaker "
                "configuration built from the inventory as it is now.",
                ", ".join(changed),
                obj.hostname,
                obj.pair.name,
                where,
            ),
        )
