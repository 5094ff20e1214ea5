"""The usage API: the usage by owner of a filesystem and window as JSON."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.response import Response

from portal import influxdb as influx
from portal.usage import services
from portal.usage.api.serializers import UsageQuerySerializer, UsageSerializer
from portal.web.query_numbers import BadParameter


class UsageViewSet(viewsets.ViewSet):
    """GET /api/v1/usage/?window=24h|7d|30d or ?since=...&until=..., and ?fs=..."""

    @extend_schema(
        parameters=[UsageQuerySerializer],
        responses={
            200: UsageSerializer,
            400: OpenApiResponse(description="a parameter refused, named with the reason"),
            503: OpenApiResponse(description="InfluxDB could not be read"),
        },
    )
    def list(self, request):
        try:
            window = services.parse_window(request.query_params)
            filesystem = services.filesystem_of(request.query_params)
        except BadParameter as error:
            return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            return Response(services.report(window, filesystem))
        except influx.InfluxError as error:
            return Response(
                {"detail": influx.unavailable_message(error)},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
