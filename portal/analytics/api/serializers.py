"""The shape of the analytics report, for the API's documentation and for its parameters."""

from __future__ import annotations

from rest_framework import serializers


class ReportQuerySerializer(serializers.Serializer):
    window = serializers.ChoiceField(
        choices=["1h", "24h", "7d"], required=False, help_text="a window ending now"
    )
    since = serializers.CharField(
        required=False, help_text="start of a range: ISO 8601 (UTC) or epoch seconds"
    )
    until = serializers.CharField(required=False, help_text="end of the range (default: now)")
    fs = serializers.CharField(required=False, help_text="filesystem (default: the first)")


class ShareSerializer(serializers.Serializer):
    server = serializers.CharField()
    bytes = serializers.FloatField()
    share = serializers.FloatField(help_text="of the filesystem's bytes; the shares sum to 1")
    ssu = serializers.CharField(required=False)
    ssu_share = serializers.FloatField(required=False, allow_null=True)


class ReportSerializer(serializers.Serializer):
    window = serializers.DictField(allow_null=True, help_text="since/until of the data read")
    oss = ShareSerializer(many=True)
    imbalance = serializers.DictField(help_text="max_over_mean and cov (population sd / mean)")
    overloaded = serializers.ListField(child=serializers.CharField())
    overloaded_detail = serializers.ListField(child=serializers.DictField())
    slow_at_array = serializers.ListField(
        child=serializers.DictField(),
        help_text="OSTs whose volume answers slowly at the array (target, server, volume, "
        "volume_group, array, array_ms, others_ms, service_ms, cpu_percent, text)",
    )
    ost_fill = serializers.DictField(help_text="spread_points, flagged, osts, furthest")
    striping = serializers.ListField(
        child=serializers.DictField(), help_text="jobid, osts, bytes, stripe_count, advice"
    )
    io_size = serializers.DictField(help_text="histogram, small_share, read_share")
    top_jobs = serializers.ListField(child=serializers.DictField())
    top_jobs_by_ops = serializers.ListField(child=serializers.DictField())
    top_clients = serializers.ListField(
        child=serializers.DictField(), help_text="client NIDs by bytes: client, bytes, ops"
    )
    top_clients_by_ops = serializers.ListField(child=serializers.DictField())
    capacity = serializers.DictField(help_text="fill trend and the dates it reaches the limits")
    heatmap = serializers.DictField(help_text="bytes/s per OSS and per OST and time step")
    request = serializers.DictField(help_text="what was read: policy, step, points, seconds")
    cached = serializers.DictField(
        allow_null=True,
        help_text="the last hour's, day's and week's reports are kept and renewed by the worker: "
        "computed_at (epoch seconds), age_seconds, refreshing (a newer one is being computed); "
        "null for a range given as since/until, computed for this request",
    )
    unavailable = serializers.CharField(
        required=False,
        help_text="only while InfluxDB does not answer: since when, and that this kept report "
        "was computed before",
    )
