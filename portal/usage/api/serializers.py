"""The shape of the usage by owner, for the API's documentation and for its parameters."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from portal.usage import choices


class UsageQuerySerializer(serializers.Serializer):
    window = serializers.ChoiceField(
        choices=list(choices.WINDOWS), required=False, help_text="a window ending now"
    )
    since = serializers.CharField(
        required=False, help_text="start of a range: ISO 8601 (UTC) or epoch seconds"
    )
    until = serializers.CharField(required=False, help_text="end of the range (default: now)")
    fs = serializers.CharField(required=False, help_text="filesystem (default: the first)")


# One body, not a list, though GET /api/v1/usage/ is the viewset's list.
@extend_schema_serializer(many=False)
class UsageSerializer(serializers.Serializer):
    window = serializers.DictField(
        allow_null=True, help_text="since/until: the first and the last accounting point read"
    )
    top = serializers.DictField(
        help_text="per kind (user, group, project) and unit (kbytes, inodes): the top owners, "
        "each with kind, id, name (empty: no name mapped), kbytes, inodes, <unit>_growth and "
        "<unit>_per_day over the window, <unit>_hard/_soft (null: none), <unit>_percent of the "
        "hard limit, <unit>_limit_at (epoch seconds it reaches the hard limit at this growth; "
        "null: not within a year), <unit>_over_soft ({state: in_grace|past_grace, grace_ends}), "
        "capacity (no hard limit on space: the dates its growth brings the filesystem to the "
        "capacity thresholds)"
    )
    over_soft = serializers.ListField(
        child=serializers.DictField(), help_text="the owners over a soft limit, past grace first"
    )
    osts = serializers.ListField(
        child=serializers.DictField(),
        help_text="per OST: target, kbytes (its owners' data), owners per kind: the top ones "
        "with their kbytes and share of the OST",
    )
    capacity = serializers.DictField(
        allow_null=True, help_text="the filesystem's kbytes_total/used and capacity thresholds"
    )
    request = serializers.DictField(help_text="what was read: window, fs, policy, owners")
