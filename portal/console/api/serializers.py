from __future__ import annotations

from rest_framework import serializers

from portal.console.models import AuditEntry
from portal.web.api_requests import NameField


class AuditEntrySerializer(serializers.ModelSerializer):
    result = serializers.CharField(read_only=True)
    job_state = serializers.CharField(source="job.state", read_only=True, default=None)

    class Meta:
        model = AuditEntry
        fields = [
            "id",
            "created",
            "username",
            "via",
            "remote_addr",
            "act",
            "object_kind",
            "object_name",
            "summary",
            "details",
            "job",
            "job_state",
            "result",
            "reverts",
        ]
        read_only_fields = fields


class ClusterActSerializer(serializers.Serializer):
    server = NameField(required=False, max_length=253)
    target = NameField(required=False, max_length=32)
    lifetime = NameField(required=False, max_length=20)
    confirm = serializers.BooleanField(default=False)

    def validate(self, data):
        if bool(data.get("server")) == bool(data.get("target")):
            raise serializers.ValidationError({"server": "name a server or a target (not both)"})
        return data


class MaintenanceSerializer(serializers.Serializer):
    server = NameField(max_length=253)
    on = serializers.BooleanField(help_text="true: start the maintenance, false: end it")
    hours = serializers.FloatField(required=False, min_value=0.25)
    reason = serializers.CharField(required=False, max_length=200, default="")
    confirm = serializers.BooleanField(default=False)


class DriveActSerializer(serializers.Serializer):
    array = NameField(max_length=32)
    drive = serializers.RegexField(r"^\d+,\d+,\d+$", help_text="tray,drawer,slot")
    step = serializers.ChoiceField(choices=["locate", "replaced"])
    confirm = serializers.BooleanField(default=False)


class SetParamSerializer(serializers.Serializer):
    filesystem = NameField(max_length=8)
    name = NameField(max_length=200)
    value = serializers.CharField(max_length=256)
    servers = serializers.ListField(child=NameField(max_length=253), required=False)
    permanent = serializers.BooleanField(default=False)
    confirm = serializers.BooleanField(default=False)


class ReadParamSerializer(serializers.Serializer):
    filesystem = NameField(max_length=8)
    name = NameField(max_length=200)


class ReadingSerializer(serializers.Serializer):
    """A parameter read on every server (200): what each server said, and how old it is."""

    filesystem = serializers.CharField()
    name = serializers.CharField()
    job = serializers.IntegerField(source="job_id")
    state = serializers.CharField(source="job.state")
    error = serializers.CharField(source="job.error", help_text="why the read failed, if it did")
    values = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="server → {parameter: value}",
    )
    errors = serializers.DictField(
        child=serializers.CharField(), help_text="server → why it gave no value"
    )
    read = serializers.DateTimeField(allow_null=True, help_text="when the servers answered")
    age_seconds = serializers.FloatField(allow_null=True)


class ReadingUnderWaySerializer(serializers.Serializer):
    """A read under way (202): its job; ask the same URL again (``poll``) for the values."""

    filesystem = serializers.CharField()
    name = serializers.CharField()
    job = serializers.IntegerField(source="job_id")
    title = serializers.CharField(source="job.title")
    state = serializers.CharField(source="job.state")
    poll = serializers.CharField(help_text="the URL that answers 200 with the values once read")


class ConfirmSerializer(serializers.Serializer):
    confirm = serializers.BooleanField(default=False)
