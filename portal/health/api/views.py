"""Read-only API of the health engine: the coloured tree and the history of changes."""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.response import Response

from portal.health.api.serializers import HealthTreeSerializer, StatusChangeSerializer
from portal.health.models import StatusChange
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
