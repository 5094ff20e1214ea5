"""Read-only API of the health engine: the coloured tree, the history of changes and what the
servers' kernels said."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.response import Response

from portal import influxdb as influx
from portal.health.api.serializers import (
    HealthTreeSerializer,
    KernelLogQuerySerializer,
    KernelLogSerializer,
    StatusChangeSerializer,
)
from portal.health.forms import KernelLogFilter
from portal.health.models import StatusChange
from portal.health.services import kernel_lines
from portal.health.services.evaluation import cache_tag, cached_trees, cached_version


class OneTree(AutoSchema):
    """The tree is one object, though drf-spectacular takes a `list` action for an array."""

    def _is_list_view(self, serializer=None) -> bool:
        return False


class HealthTreeViewSet(viewsets.ViewSet):
    """GET /api/v1/health/: every filesystem with its SSUs, pairs, servers, arrays and targets,
    each with its colour and the reasons for it, as the engine last evaluated them."""

    schema = OneTree()

    @extend_schema(responses=HealthTreeSerializer)
    def list(self, request):
        version, checked = cached_version()
        tag = cache_tag(version, checked)
        etag = f'"{tag}"' if tag else None
        if etag and etag in request.headers.get("If-None-Match", ""):
            return Response(status=304, headers={"ETag": etag})
        response = Response(
            {
                "checked": checked.isoformat() if checked else None,
                "filesystems": cached_trees(version),
            }
        )
        if etag:
            response["ETag"] = etag
        return response


class StatusChangeViewSet(viewsets.ReadOnlyModelViewSet):
    """Changes of colour, newest first; filter with ?kind=target&name=scratch-OST0003."""

    queryset = StatusChange.objects.all()
    serializer_class = StatusChangeSerializer

    def get_queryset(self):
        queryset = super().get_queryset()
        for field in ("kind", "name", "new"):
            if value := self.request.query_params.get(field):
                queryset = queryset.filter(**{field: value})
        return queryset


class KernelLogViewSet(viewsets.ViewSet):
    """GET /api/v1/kernel-log/: the servers' Lustre and LNet kernel lines, newest first (at most
    200), and the storms counted in the window. A bad filter is a 400 naming the field and the
    reason; 503 when InfluxDB does not answer."""

    schema = OneTree()

    @extend_schema(
        parameters=[KernelLogQuerySerializer],
        responses={
            200: KernelLogSerializer,
            400: OpenApiResponse(description="a filter refused, by field"),
            503: OpenApiResponse(description="InfluxDB could not be read"),
        },
    )
    def list(self, request):
        form = KernelLogFilter(request.query_params)
        if not form.is_valid():
            return Response(form.errors, status=status.HTTP_400_BAD_REQUEST)
        since, until = form.span(time.time())
        which = form.line_filter()
        try:
            lines = kernel_lines.lines_about(which, since, until, kernel_lines.SEARCH_LIMIT)
            storms = kernel_lines.storms_about(which, since, until)
        except influx.InfluxError as error:
            return Response(
                {"detail": influx.unavailable_message(error)},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        return Response(
            {
                "since": datetime.fromtimestamp(since, UTC).isoformat(),
                "until": datetime.fromtimestamp(until, UTC).isoformat(),
                "lines": [
                    {
                        "time": line.at.isoformat(),
                        "server": line.server,
                        "subsystem": line.subsystem,
                        "severity": line.severity,
                        "message_number": line.message_number or None,
                        "target": line.label or None,
                        "sequence": line.sequence,
                        "message": line.message,
                    }
                    for line in lines
                ],
                "storms": [
                    {
                        "server": storm.server,
                        "target": storm.label or None,
                        "message_number": storm.message_number or None,
                        "severity": storm.severity,
                        "lines": storm.lines,
                    }
                    for storm in storms
                ],
            }
        )
