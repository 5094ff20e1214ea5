"""Admin pages of the inventory: read-mostly views of what the planner created.

The rows are the one truth of a pair: each provisioning run builds its Pacemaker configuration,
array layout and playbook variables from them (``services.pair_plan``). What a run can apply to
a built pair, the fence devices of a server (BMC address and user, PDU outlet), can be changed
here, through ``Server.clean`` like every other way in, and so can how the arrays' REST collector
reaches an array (controllers' addresses, monitor account, each controller's pinned
certificate); what it cannot (names written into the formatted targets, NIDs, the arrays'
layout) is shown read-only.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.urls import reverse
from django.utils.html import format_html

from portal.inventory import models
from portal.inventory.provisioning import start_array_collector_update, start_fencing_update
from provisioning.names import monitor_password_problem

# The fields of a server a job can apply to a built pair, as an admin names them. The BMC user
# is the pair's (one fence login per cluster) and comes with the password, from the wizard.
FENCING_LABELS = {
    "bmc_address": "BMC address",
    "pdu_outlet": "PDU outlet",
}
FENCING_FIELDS = tuple(FENCING_LABELS)


class ReadOnly:
    """Shown, never changed here: the planner made these rows and the targets carry them."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    pass


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


class ServerForm(forms.ModelForm):
    """A clash ``Server.clean`` finds in a field shown read-only (an inventory that already
    clashed, restored from an older archive) is shown above the form, naming the field,
    instead of failing the page."""

    def add_error(self, field, error) -> None:
        if field is None and isinstance(error, ValidationError) and hasattr(error, "error_dict"):
            routed: dict[str, list] = {}
            for name, errors in error.error_dict.items():
                key = name if name in self.fields or name == NON_FIELD_ERRORS else NON_FIELD_ERRORS
                if key != name:
                    errors = [f"{name}: {message}" for item in errors for message in item]
                routed.setdefault(key, []).extend(errors)
            error = ValidationError(routed)
        super().add_error(field, error)


@admin.register(models.Server)
class ServerAdmin(admin.ModelAdmin):
    form = ServerForm
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
                "PDU outlet, and its partner's sensor polls the same BMC. Saving a change of a "
                "built pair starts the job that pushes the pair's Pacemaker configuration with "
                "it and points the sensor at it; until that job has run, the cluster fences "
                "through the devices it had.",
            },
        ),
        (
            "Built into the targets",
            {
                "fields": ("hostname", "role", "pair", "lnet_nids", "bmc_username"),
                "description": "The formatted targets carry these names and NIDs; they are "
                "changed by rebuilding the pair, not here. The BMC user is the pair's one fence "
                "login, set with the BMC passwords in the wizard.",
            },
        ),
    )
    readonly_fields = ("hostname", "role", "pair", "lnet_nids", "bmc_username")

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
        job = start_fencing_update(obj.pair, request.user)
        if job is None:
            messages.info(
                request,
                f"{', '.join(changed)} of {obj.hostname} changed. {obj.pair.name} has not been "
                "built yet: its provisioning job applies the change when it runs.",
            )
            return
        messages.warning(
            request,
            format_html(
                '{} of {} changed. <a href="{}">Job #{}</a> pushes the Pacemaker configuration '
                "of {} with it and points the partner's sensor at it; until it has run, the "
                "cluster fences through the devices it had.",
                ", ".join(changed),
                obj.hostname,
                reverse("jobs:job-detail", args=[job.pk]),
                job.pk,
                obj.pair.name,
            ),
        )


@admin.register(models.SSU)
class SSUAdmin(ReadOnlyAdmin):
    list_display = ("name", "filesystem", "pair", "created")
    list_filter = ("filesystem",)


@admin.register(models.EnclosureModel)
class EnclosureModelAdmin(ReadOnlyAdmin):
    list_display = ("name", "kind", "drawers", "slots_per_drawer", "controllers", "description")


class EnclosureInline(ReadOnly, admin.TabularInline):
    model = models.Enclosure
    extra = 0


class StorageArrayForm(forms.ModelForm):
    monitor_password = forms.CharField(
        label="Monitor password",
        required=False,
        strip=False,  # kept exactly as typed
        widget=forms.PasswordInput(render_value=False),
        help_text="kept encrypted, never shown; leave empty to keep the one set before",
    )

    def clean_monitor_password(self):
        password = self.cleaned_data["monitor_password"]
        if password and (problem := monitor_password_problem(password)):
            raise ValidationError(problem)
        return password

    def save(self, commit=True):
        if self.cleaned_data.get("monitor_password"):
            self.instance.set_monitor_password(self.cleaned_data["monitor_password"])
        return super().save(commit)


# What the arrays' REST collector needs, changed here (an appliance moving to the collector).
ARRAY_COLLECTOR_FIELDS = (
    "management_a", "management_b", "monitor_user", "monitor_password",
    "certificate_a_sha256", "certificate_b_sha256",
)  # fmt: skip
ARRAY_PLANNED_FIELDS = ("name", "pair", "drive_tb", "installed_drives", "global_spares")


@admin.register(models.StorageArray)
class StorageArrayAdmin(admin.ModelAdmin):
    form = StorageArrayForm
    list_display = ("name", "pair", "drive_tb", "installed_drives", "management_a")
    inlines = [EnclosureInline]
    fieldsets = (
        (
            "Array collector (SANtricity REST API)",
            {
                "fields": ARRAY_COLLECTOR_FIELDS,
                "description": "The management server reads the array through its "
                "controllers' REST API when both addresses are given; otherwise the pair's "
                "servers read it through SMcli. A change applies when the provisioning job's "
                "sensor step runs again; it pins the certificate each controller serves when "
                "that controller has none pinned, and refuses one that differs from the "
                "controller's pin. Each array has its own monitor password.",
            },
        ),
        ("Planned", {"fields": ARRAY_PLANNED_FIELDS}),
    )
    readonly_fields = ARRAY_PLANNED_FIELDS

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        changed = [name for name in ARRAY_COLLECTOR_FIELDS if name in form.changed_data]
        if not (change and changed):
            return
        job = start_array_collector_update(obj.pair, request.user)
        if job is None:
            messages.info(
                request,
                f"{obj.pair.name} has not been built yet: its provisioning job's sensor step "
                f"applies the change of {obj.name}.",
            )
            return
        messages.warning(
            request,
            format_html(
                '<a href="{}">Job #{}</a> applies the change of {}: the array collector on this '
                "management server and the sensors of {}.",
                reverse("jobs:job-detail", args=[job.pk]),
                job.pk,
                obj.name,
                obj.pair.name,
            ),
        )


@admin.register(models.VolumeGroup)
class VolumeGroupAdmin(ReadOnlyAdmin):
    list_display = ("name", "array", "raid", "segment_kib", "controller", "state")
    list_filter = ("state", "array__pair")


@admin.register(models.Drive)
class DriveAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "size_tb", "state", "volume_group")
    list_filter = ("state", "enclosure__array")


@admin.register(models.Target)
class TargetAdmin(ReadOnlyAdmin):
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
