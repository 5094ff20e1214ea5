"""Admin pages of the alerts app: rules are edited here until the alert console exists; events,
their transitions and the mail outbox are read-only (the engine and the outbox write them).
Incident groups and their mails are shown on the Alerts pages."""

from __future__ import annotations

from django.contrib import admin

from portal.alerts.models import Delivery, Event, Rule, Transition


@admin.register(Rule)
class RuleAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "severity",
        "condition",
        "enabled",
        "for_seconds",
        "repeat_seconds",
        "group_by",
    )
    list_filter = ("severity", "condition", "enabled", "group_by")


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("rule", "object_label", "status", "opened", "resolved", "acknowledged_by")
    list_filter = ("status", "severity")


@admin.register(Transition)
class TransitionAdmin(ReadOnlyAdmin):
    list_display = ("event", "kind", "at")


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "group_mail",
        "transition",
        "address",
        "status",
        "attempts",
        "next_attempt",
        "sent_at",
    )
    list_filter = ("status",)
