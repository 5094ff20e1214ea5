from __future__ import annotations

from rest_framework import serializers

from portal.health.choices import NodeKind, Status
from portal.health.models import StatusChange


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
