from __future__ import annotations

from django.contrib import admin

from portal.jobs.models import Job, Step


class StepInline(admin.TabularInline):
    model = Step
    fields = ("position", "name", "state", "progress", "started", "finished", "idempotent")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("pk", "title", "kind", "state", "created_by", "created", "finished")
    list_filter = ("kind", "state")
    filter_horizontal = ("pairs",)
    readonly_fields = ("state", "error", "started", "finished", "attempts")
    inlines = [StepInline]
