"""Read-only API of the inventory. Changes go through the wizard and its jobs."""

from __future__ import annotations

from rest_framework import viewsets

from portal.inventory import models
from portal.inventory.api import serializers


class FilesystemViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.Filesystem.objects.all()
    serializer_class = serializers.FilesystemSerializer
    lookup_field = "name"


class ServerPairViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.ServerPair.objects.select_related("filesystem").prefetch_related("servers")
    serializer_class = serializers.ServerPairSerializer
    lookup_field = "name"


class ServerViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.Server.objects.select_related("pair")
    serializer_class = serializers.ServerSerializer
    lookup_field = "hostname"
    lookup_value_regex = "[a-z0-9.-]+"


class SSUViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.SSU.objects.select_related("filesystem", "pair")
    serializer_class = serializers.SSUSerializer
    lookup_field = "name"


class StorageArrayViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.StorageArray.objects.select_related("pair").prefetch_related(
        "enclosures__model"
    )
    serializer_class = serializers.StorageArraySerializer
    lookup_field = "name"


class VolumeGroupViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.VolumeGroup.objects.select_related("array")
    serializer_class = serializers.VolumeGroupSerializer
    lookup_field = "name"


class DriveViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.Drive.objects.select_related("enclosure", "volume_group")
    serializer_class = serializers.DriveSerializer


class TargetViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = models.Target.objects.select_related(
        "filesystem", "volume_group", "primary_server", "failover_server", "current_server"
    )
    serializer_class = serializers.TargetSerializer

    def get_queryset(self):
        queryset = super().get_queryset()
        if filesystem := self.request.query_params.get("filesystem"):
            queryset = queryset.filter(filesystem__name=filesystem)
        if kind := self.request.query_params.get("kind"):
            queryset = queryset.filter(kind=kind)
        return queryset
