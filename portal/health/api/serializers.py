from __future__ import annotations

from rest_framework import serializers

from portal.health.choices import NodeKind, Status
from portal.health.forms import WINDOWS
from portal.health.models import StatusChange
from sensors.kmsg import SEVERITIES


class HealthNodeSerializer(serializers.Serializer):
    """One object of the tree (documentation of the shape; the tree is built as plain dicts)."""

    key = serializers.CharField(help_text='the inventory object ("target:12")')
    kind = serializers.ChoiceField(choices=NodeKind.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices)
    reasons = serializers.ListField(child=serializers.CharField())
    summary = serializers.DictField(
        help_text="numbers shown beside the colour (fill, server), and the flags on_partner "
        "(a target served by its failover server), silent (a server's sensor), failed_over "
        "and ready_for_failback (a server whose targets run on its partner), fencing_levels "
        '({"bmc": true/false/null, "pdu": ...}), redundancy (the redundant parts it lost), '
        "failed_parts (an array's failed drawers and controllers), moving and building "
        '({"job", "title"}: a job acts on it)'
    )
    since = serializers.DateTimeField(help_text="when it took this colour")
    children = serializers.ListField(child=serializers.DictField(), help_text="nodes like this")


class HealthTreeSerializer(serializers.Serializer):
    checked = serializers.DateTimeField(allow_null=True, help_text="last evaluation")
    filesystems = HealthNodeSerializer(many=True)


class StatusChangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = StatusChange
        fields = [
            "id",
            "key",
            "kind",
            "name",
            "old",
            "new",
            "reasons",
            "at",
            "initial",
            "processed",
        ]


class KernelLogQuerySerializer(serializers.Serializer):
    """The kernel log's filter (documentation; ``portal.health.forms.KernelLogFilter`` checks)."""

    server = serializers.CharField(required=False, help_text="a server's host name")
    target = serializers.CharField(required=False, help_text="an OST or MDT: scratch-OST0003")
    message_number = serializers.CharField(required=False, help_text="Lustre's, such as 11-0")
    severity = serializers.ChoiceField(
        choices=SEVERITIES, required=False, help_text="this severity or worse"
    )
    window = serializers.ChoiceField(
        choices=[key for key, _label, _seconds in WINDOWS], required=False, default="24h"
    )
    until = serializers.DateTimeField(required=False, help_text="the window's end; now if none")


class KernelLineSerializer(serializers.Serializer):
    time = serializers.DateTimeField()
    server = serializers.CharField()
    subsystem = serializers.ChoiceField(choices=["lustre", "lnet"])
    severity = serializers.ChoiceField(choices=SEVERITIES)
    message_number = serializers.CharField(allow_null=True)
    target = serializers.CharField(allow_null=True, help_text="the target the line names")
    sequence = serializers.IntegerField(help_text="the record's number in its boot's kernel log")
    message = serializers.CharField()


class KernelStormSerializer(serializers.Serializer):
    server = serializers.CharField()
    target = serializers.CharField(allow_null=True)
    message_number = serializers.CharField(allow_null=True)
    severity = serializers.ChoiceField(choices=SEVERITIES)
    lines = serializers.IntegerField(help_text="lines counted, not kept one by one")


class KernelLogSerializer(serializers.Serializer):
    since = serializers.DateTimeField()
    until = serializers.DateTimeField()
    lines = KernelLineSerializer(many=True, help_text="newest first, at most 200")
    storms = KernelStormSerializer(many=True)
