from __future__ import annotations

from rest_framework import serializers

from portal.surveys import choices
from portal.surveys.models import Survey, SurveyResult
from portal.web.api_requests import NameField


class SurveyResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = SurveyResult
        fields = [
            "server",
            "target",
            "line",
            "ost",
            "sz_kib",
            "rsz_kib",
            "obj",
            "thr",
            "test",
            "mb_s",
            "min_mb_s",
            "max_mb_s",
            "flag",
        ]


class SurveySerializer(serializers.ModelSerializer):
    ssu = serializers.SlugRelatedField(source="pair", slug_field="name", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    job = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = Survey
        fields = [
            "id",
            "ssu",
            "scope",
            "targets",
            "size_mb",
            "rsz_lo_kib",
            "rsz_hi_kib",
            "obj_lo",
            "obj_hi",
            "thr_lo",
            "thr_hi",
            "tests",
            "per_target",
            "tolerance",
            "acceptance",
            "warnings",
            "verdict",
            "reasons",
            "expected_mb_s",
            "measured_mb_s",
            "job",
            "created_by",
            "created",
            "finished",
        ]
        read_only_fields = fields


class StartSurveySerializer(serializers.Serializer):
    """What starting a survey takes; the service checks the values and names the field."""

    ssu = NameField(help_text="the SSU (OSS pair) to survey")
    scope = serializers.ChoiceField(choices=choices.Scope.choices, default=choices.Scope.SSU)
    server = NameField(required=False, help_text="scope=server: the OSS")
    targets = serializers.ListField(
        child=NameField(), required=False, help_text="scope=targets: OST labels"
    )
    size_mb = serializers.IntegerField(required=False)
    rsz_lo_kib = serializers.IntegerField(required=False)
    rsz_hi_kib = serializers.IntegerField(required=False)
    obj_lo = serializers.IntegerField(required=False)
    obj_hi = serializers.IntegerField(required=False)
    thr_lo = serializers.IntegerField(required=False)
    thr_hi = serializers.IntegerField(required=False)
    tests = serializers.ListField(child=serializers.CharField(), required=False)
    per_target = serializers.BooleanField(required=False, default=True)
    tolerance = serializers.FloatField(required=False, help_text="0.9 = pass at 90 % of the plan")
    confirm = serializers.BooleanField(
        default=False, help_text="run although the filesystem is in use (409 lists why)"
    )
