from __future__ import annotations

from rest_framework import serializers

from portal.inventory import models


class FilesystemSerializer(serializers.ModelSerializer):
    class Meta:
        model = models.Filesystem
        fields = ["id", "name", "mgs_nids", "created"]


class ServerSerializer(serializers.ModelSerializer):
    pair = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = models.Server
        # Credentials stay out of the API: the user name is enough to tell them apart.
        fields = [
            "id",
            "hostname",
            "role",
            "pair",
            "lnet_nids",
            "bmc_address",
            "bmc_username",
            "pdu_outlet",
        ]


class ServerPairSerializer(serializers.ModelSerializer):
    filesystem = serializers.SlugRelatedField(slug_field="name", read_only=True)
    servers = serializers.SlugRelatedField(slug_field="hostname", many=True, read_only=True)

    class Meta:
        model = models.ServerPair
        fields = ["id", "name", "kind", "filesystem", "servers", "plan", "created"]


class SSUSerializer(serializers.ModelSerializer):
    filesystem = serializers.SlugRelatedField(slug_field="name", read_only=True)
    pair = serializers.SlugRelatedField(slug_field="name", read_only=True)
    capacity = serializers.SerializerMethodField()

    class Meta:
        model = models.SSU
        fields = ["id", "name", "filesystem", "pair", "capacity", "created"]

    def get_capacity(self, ssu: models.SSU) -> dict:
        return ssu.plan["capacity"]


class StorageArraySerializer(serializers.ModelSerializer):
    pair = serializers.SlugRelatedField(slug_field="name", read_only=True)
    enclosures = serializers.SerializerMethodField()

    class Meta:
        model = models.StorageArray
        fields = ["id", "name", "pair", "drive_tb", "enclosures"]

    def get_enclosures(self, array: models.StorageArray) -> list[dict]:
        return [
            {"name": e.name, "model": e.model.name, "position": e.position}
            for e in array.enclosures.all()
        ]


class VolumeGroupSerializer(serializers.ModelSerializer):
    array = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = models.VolumeGroup
        fields = ["id", "name", "array", "raid", "segment_kib", "controller", "state"]


class DriveSerializer(serializers.ModelSerializer):
    enclosure = serializers.SlugRelatedField(slug_field="name", read_only=True)
    volume_group = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = models.Drive
        fields = ["id", "enclosure", "drawer", "slot", "size_tb", "state", "volume_group"]


class TargetSerializer(serializers.ModelSerializer):
    filesystem = serializers.SlugRelatedField(slug_field="name", read_only=True)
    volume_group = serializers.SlugRelatedField(slug_field="name", read_only=True)
    primary_server = serializers.SlugRelatedField(slug_field="hostname", read_only=True)
    failover_server = serializers.SlugRelatedField(slug_field="hostname", read_only=True)
    # None while the target is not mounted anywhere.
    current_server = serializers.SlugRelatedField(
        slug_field="hostname", read_only=True, allow_null=True
    )

    class Meta:
        model = models.Target
        fields = [
            "id",
            "label",
            "kind",
            "index",
            "filesystem",
            "volume_group",
            "primary_server",
            "failover_server",
            "current_server",
            "device",
            "mount_point",
            "state",
        ]
