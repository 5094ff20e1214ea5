"""The inventory's viewsets, registered on the one API router."""

from __future__ import annotations

from portal.inventory.api import views

ROUTES = [
    ("filesystems", views.FilesystemViewSet),
    ("server-pairs", views.ServerPairViewSet),
    ("servers", views.ServerViewSet),
    ("ssus", views.SSUViewSet),
    ("arrays", views.StorageArrayViewSet),
    ("volume-groups", views.VolumeGroupViewSet),
    ("drives", views.DriveViewSet),
    ("targets", views.TargetViewSet),
]
