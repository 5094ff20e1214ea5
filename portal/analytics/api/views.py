"""The analytics API: the whole report of a window as JSON."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from portal import influxdb as influx
from portal.analytics import cached, services
from portal.analytics.api.serializers import ReportQuerySerializer, ReportSerializer
from portal.web.query_numbers import BadParameter


class AnalyticsViewSet(viewsets.ViewSet):
    """GET /api/v1/analytics/report/?window=1h|24h|7d or ?since=...&until=..., and ?fs=..."""

    @extend_schema(
        parameters=[ReportQuerySerializer],
        responses={
            200: ReportSerializer,
            503: OpenApiResponse(description="InfluxDB could not be read"),
        },
    )
    @action(detail=False, methods=["get"])
    def report(self, request):
        try:
            window = services.parse_window(request.query_params)
            filesystem = services.filesystem_of(request.query_params)
        except BadParameter as error:
            return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            return Response(cached.report(window, filesystem))
        except influx.InfluxError as error:
            return Response(
                {"detail": influx.unavailable_message(error)},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
