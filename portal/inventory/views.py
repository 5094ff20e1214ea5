from __future__ import annotations

from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from portal.inventory.choices import TargetKind
from portal.inventory.models import SSU, Filesystem, ServerPair


@require_safe
def ssu_list(request):
    filesystems = Filesystem.objects.prefetch_related("server_pairs__servers").annotate(
        ost_count=Count("targets", filter=Q(targets__kind=TargetKind.OST))
    )
    ssus = (
        SSU.objects.select_related("filesystem", "pair")
        .prefetch_related("pair__servers")
        .annotate(ost_count=Count("pair__arrays__volume_groups__targets", distinct=True))
    )
    return render(request, "inventory/ssu_list.html", {"filesystems": filesystems, "ssus": ssus})


@require_safe
def ssu_detail(request, name: str):
    pair = get_object_or_404(ServerPair.objects.select_related("filesystem"), name=name)
    arrays = pair.arrays.prefetch_related("enclosures__model", "volume_groups__drives__enclosure")
    targets = pair.filesystem.targets.filter(volume_group__array__pair=pair).select_related(
        "volume_group", "primary_server", "failover_server", "current_server"
    )
    return render(
        request,
        "inventory/ssu_detail.html",
        {
            "pair": pair,
            "ssu": getattr(pair, "ssu", None),
            "servers": pair.servers.all(),
            "arrays": arrays,
            "targets": targets,
            "capacity": pair.plan["capacity"],
        },
    )
