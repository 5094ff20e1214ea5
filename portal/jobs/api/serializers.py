from __future__ import annotations

from rest_framework import serializers

from portal.jobs.models import Job, Step


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = Step
        fields = [
            "position",
            "name",
            "title",
            "state",
            "idempotent",
            "started",
            "finished",
            "progress",
            "log",
            "output",
        ]


class JobSerializer(serializers.ModelSerializer):
    steps = StepSerializer(many=True, read_only=True)
    pairs = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    kind_label = serializers.CharField(read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "kind_label",
            "title",
            "state",
            "error",
            "outcome",
            "pairs",
            "params",
            "created_by",
            "created",
            "started",
            "finished",
            "attempts",
            "cancel_requested",
            "logs_pruned",
            "progress_percent",
            "steps",
        ]
