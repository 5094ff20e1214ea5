from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from portal.alerts.forms import RuleForm, SilenceForm
from portal.alerts.models import (
    Delivery,
    Event,
    GroupMail,
    IncidentGroup,
    Rule,
    Silence,
    Transition,
)
from portal.alerts.views import members_as_shown


class RuleSerializer(serializers.ModelSerializer):
    """Validated by the console's own form, so the API refuses what the form refuses, with the
    same field names and reasons."""

    recipients = serializers.SlugRelatedField(
        many=True,
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
    )

    # Plain integers here: the form says why a negative duration is refused.
    for_seconds = serializers.IntegerField(required=False)
    clear_seconds = serializers.IntegerField(required=False)
    repeat_seconds = serializers.IntegerField(required=False)
    # Empty on a rule someone wrote: not the slug pattern the model field would document.
    builtin = serializers.CharField(read_only=True)

    class Meta:
        model = Rule
        fields = ["id", *RuleForm.Meta.fields, "builtin", "updated"]
        read_only_fields = ["builtin", "updated"]

    def validate_recipients(self, users):
        for user in users:
            if not user.email or not user.is_active:
                raise serializers.ValidationError(
                    f"user {user.username} cannot receive alert mail: no e-mail address, "
                    "or not active"
                )
        return users

    def validate(self, attrs):
        base = self.instance or Rule()  # a new rule starts from the model's defaults
        data = {
            field: getattr(base, field) for field in RuleForm.Meta.fields if field != "recipients"
        }
        data.update({k: v for k, v in attrs.items() if k != "recipients"})
        recipients = attrs.get(
            "recipients", list(self.instance.recipients.all()) if self.instance else []
        )
        data["recipients"] = [user.pk for user in recipients]
        form = RuleForm(
            data={k: ("" if v is None else v) for k, v in data.items() if v is not False},
            instance=self.instance,
        )
        if not form.is_valid():
            raise serializers.ValidationError(
                {field: [str(e) for e in errors] for field, errors in form.errors.items()}
            )
        cleaned = {k: v for k, v in form.cleaned_data.items() if k != "recipients"}
        cleaned["recipients"] = recipients
        return cleaned


class TransitionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Transition
        fields = ["kind", "at", "detail"]


class EventSerializer(serializers.ModelSerializer):
    rule = serializers.CharField(source="rule.name", read_only=True)
    # null until someone acknowledges it
    acknowledged_by = serializers.CharField(
        source="acknowledged_by.username", read_only=True, default=None, allow_null=True
    )
    transitions = TransitionSerializer(many=True, read_only=True)

    class Meta:
        model = Event
        fields = [
            "id",
            "rule",
            "severity",
            "status",
            "object_label",
            "object_key",
            "object_url",
            "summary",
            "opened",
            "resolved",
            "acknowledged_by",
            "acknowledged_at",
            "acknowledge_comment",
            "transitions",
        ]


class MemberSerializer(EventSerializer):
    """An alert of an incident (``muted``: why it is not mailed on its own, "" if it is not)."""

    muted = serializers.CharField(read_only=True)

    class Meta(EventSerializer.Meta):
        fields = [name for name in EventSerializer.Meta.fields if name != "transitions"]
        fields.insert(fields.index("summary") + 1, "muted")


class DeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = Delivery
        fields = ["address", "status", "attempts", "sent_at", "last_error"]


class GroupMailSerializer(serializers.ModelSerializer):
    """A mail of an incident: its kind, when, the alerts it told of (as it told of them), and
    to whom it went."""

    deliveries = DeliverySerializer(many=True, read_only=True)
    members = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta:
        model = GroupMail
        fields = ["kind", "at", "members", "deliveries"]


class IncidentSerializer(serializers.ModelSerializer):
    """An incident: the alerts that share their cause's place, mailed as one; ``members`` as
    its mail lists them (the causes first, the muted after them)."""

    # null until someone acknowledges it
    acknowledged_by = serializers.CharField(
        source="acknowledged_by.username", read_only=True, default=None, allow_null=True
    )
    members = serializers.SerializerMethodField()
    mails = GroupMailSerializer(many=True, read_only=True)

    @extend_schema_field(MemberSerializer(many=True))
    def get_members(self, group: IncidentGroup) -> list[dict]:
        return MemberSerializer(members_as_shown(group), many=True).data

    class Meta:
        model = IncidentGroup
        fields = [
            "id",
            "key",
            "label",
            "severity",
            "status",
            "opened",
            "resolved",
            "acknowledged_by",
            "acknowledged_at",
            "acknowledge_comment",
            "members",
            "mails",
        ]


class AcknowledgeSerializer(serializers.Serializer):
    comment = serializers.CharField(max_length=500, required=False, allow_blank=True)


class SilenceSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True)

    class Meta:
        model = Silence
        fields = ["id", "object_key", "object_label", "starts", "ends", "reason", "created_by"]
        read_only_fields = ["object_label", "created_by"]

    def validate(self, attrs):
        form = SilenceForm(
            data={
                "object_key": attrs.get("object_key", ""),
                "starts": attrs["starts"].strftime("%Y-%m-%d %H:%M:%S")
                if attrs.get("starts")
                else "",
                "ends": attrs["ends"].strftime("%Y-%m-%d %H:%M:%S") if attrs.get("ends") else "",
                "reason": attrs.get("reason", ""),
            }
        )
        if not form.is_valid():
            raise serializers.ValidationError(
                {field: [str(e) for e in errors] for field, errors in form.errors.items()}
            )
        attrs["starts"], attrs["ends"] = form.cleaned_data["starts"], form.cleaned_data["ends"]
        attrs["object_label"] = form.save(commit=False).object_label
        return attrs
