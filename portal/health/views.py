"""Pages of the health app: the dashboard, drill-down pages for an SSU, a server and a target,
the thresholds and the retention of history, and the JSON the charts read. Views only look
things up and render; the colours come from the cache the engine keeps
(``services.evaluation``)."""

from __future__ import annotations

import functools
import hashlib
import time
from datetime import UTC, datetime
from html import escape
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db.models import Model
from django.forms import modelform_factory
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import RFC3986_SUBDELIMS, urlencode
from django.utils.safestring import mark_safe
from django.utils.timezone import localtime
from django.views.decorators.cache import never_cache
from django.views.decorators.http import condition, require_http_methods, require_safe

from portal import influxdb as influx
from portal.health.choices import CHART_RANGES, NodeKind
from portal.health.forms import KernelLogFilter
from portal.health.models import HealthSettings, HealthStatus, RetentionSettings, StatusChange
from portal.health.services import (
    array_events,
    changes,
    charts,
    check_all,
    clients,
    kernel_lines,
    slowness,
)
from portal.health.services.evaluation import (
    cache_tag,
    cached_trees,
    cached_version,
    last_checked,
)
from portal.health.services.facts import object_key
from portal.inventory.choices import ServerRole, TargetKind
from portal.inventory.models import SSU, Filesystem, Server, Target
from portal.single_row.page import single_row_settings
from portal.web.shared_cache import once_per_key, reused
from sensors import schema

RECENT_CHANGES = 15
HISTORY_LENGTH = 50


@require_safe
@never_cache
@login_not_required
def healthz(request):
    """For load balancers and monitoring: 200 when every required service answers, 503 naming
    the rest; a mail relay that does not answer is named under ``degraded`` with a 200 (the
    appliance works on and its alert mail waits; a load balancer must not hide the portal)."""
    states = check_all()
    down = [state.name for state in states if not state.ok and state.required]
    degraded = [state.name for state in states if not state.ok and not state.required]
    body = {
        "status": "unavailable" if down else "degraded" if degraded else "ok",
        "down": down,
        "degraded": degraded,
        "services": {state.name: state.as_dict() for state in states},
    }
    return JsonResponse(body, status=200 if not down else 503)


@require_safe
def service_panel(request):
    """The service tiles alone, for the dashboard's periodic refresh."""
    return render(request, "health/_services.html", {"services": check_all()})


# --- the dashboard ----------------------------------------------------------------------------


# The tiles of the newest version this process built or read from Redis, by filesystem: a
# 100-SSU rack's tiles are 3,000 cells, and every open dashboard asks for them every few seconds.
_tiles: dict[tuple[str, str], tuple[list[dict], dict[str, int]]] = {}


def _overview(request) -> dict:
    version, checked = cached_version()
    trees = cached_trees(version)
    wanted = request.GET.get("fs")
    tree = next((t for t in trees if t["name"] == wanted), trees[0] if trees else None)
    units, counts = _tiles_of(version, tree) if tree is not None else ([], {})
    return {
        "filesystems": trees,
        "tree": tree,
        "units": units,
        "errors": counts.get("red", 0),
        "warnings": counts.get("orange", 0),
        "checked": checked,
        "changes": _latest_changes(version),
        "refresh_seconds": settings.HEALTH_REFRESH_SECONDS,
        "array_collector": _array_collector(tree, checked),
    }


def _latest_changes(version: str | None) -> list:
    """The latest changes of colour, grouped: read once per version for all the portal's
    processes (the changes are written with a new version; grouping them reads up to 2,000
    rows, a first evaluation of a 100-SSU rack writes 3,000)."""
    if not version:
        return changes.latest(RECENT_CHANGES)
    return once_per_key(f"health:changes:{version}", lambda: changes.latest(RECENT_CHANGES))


def _array_collector(tree: dict | None, checked) -> dict | None:
    """The array collector's line of the filesystem's summary, its last round's age as of the
    evaluation that stored it."""
    found = (tree or {}).get("summary", {}).get("array_collector")
    if not found:
        return None
    last = found.get("last_round")
    ago = round(checked.timestamp() - last) if last is not None and checked else None
    return {**found, "ago": max(0, ago) if ago is not None else None}


def _tiles_of(version: str | None, tree: dict) -> tuple[list[dict], dict[str, int]]:
    """The filesystem's tiles and its count of red and orange servers, arrays and targets,
    built once per version for all the portal's processes and kept in this one."""
    if not version:
        return _build_tiles(tree)
    kept = _tiles.get((version, tree["name"]))
    if kept is not None:
        return kept
    kept = once_per_key(f"health:tiles:{version}:{tree['name']}", lambda: _build_tiles(tree))
    if not any(key[0] == version for key in _tiles):
        _tiles.clear()  # an older version's
    _tiles[(version, tree["name"])] = kept
    return kept


def _build_tiles(tree: dict) -> tuple[list[dict], dict[str, int]]:
    units = [_tile(unit) for unit in tree["children"]]
    counts = {"red": 0, "orange": 0}
    for node in _walk(tree):
        if node["kind"] in (NodeKind.SERVER, NodeKind.ARRAY, NodeKind.TARGET):
            if node["status"] in counts:
                counts[node["status"]] += 1
    return units, counts


def overview_etag(request, *args, **kwargs) -> str | None:
    """The cached colours' tag, the filesystem, the user and InfluxDB's outage: a browser that
    has this refresh already gets 304 Not Modified."""
    tag = cache_tag(*cached_version())
    if not tag:
        return None
    # The banner of an InfluxDB outage changes the panel while the colours stay as they were.
    since = influx.unavailable_since()
    # The filesystem as asked, hashed: it is any text, and a header holds no control character
    # or quote (gunicorn refuses the answer, Django refuses CR and LF).
    wanted = hashlib.sha256(request.GET.get("fs", "").encode(errors="replace")).hexdigest()[:16]
    return f"{tag}-{wanted}-{request.user.pk}-{since.timestamp() if since else ''}"


def _walk(node: dict):
    yield node
    for child in node["children"]:
        yield from _walk(child)


def _tile(unit: dict) -> dict:
    """An SSU (or the MDS pair) as a tile: its servers, arrays and targets as cells, each
    with the words shown on hover. Built here, not in the template: a 100-SSU rack has
    thousands of cells and the page refreshes every few seconds."""
    cells: dict[str, list[str]] = {"server": [], "array": [], "target": []}
    for node in _walk(unit):
        kind = node["kind"]
        if kind not in cells:
            continue
        name = node["name"]
        where = ""
        text, url = name, None
        if kind == NodeKind.TARGET:
            summary = node.get("summary") or {}
            if summary.get("server"):
                where = f" on {summary['server']}"
            if summary.get("fill_percent") is not None:
                where += f", {summary['fill_percent']} % full"
            if schema.is_mgs_label(name):
                text = "M"
            else:
                text, url = name[-2:], _drill_down_url("health:target", name)
        elif kind == NodeKind.SERVER:
            url = _drill_down_url("health:server", name)
        why = "; ".join(node["reasons"]) or "as designed"
        cells[kind].append(
            _cell_html(kind, name, node["status"], f"{name}{where}: {why}", text, url)
        )
    return {
        # What the tile's head shows of the unit (not its subtree: the tiles are kept in Redis).
        "node": {key: unit[key] for key in ("kind", "name", "status", "reasons")},
        "servers": mark_safe("".join(cells["server"])),  # noqa: S308 (escaped by _cell_html)
        "arrays": mark_safe("".join(cells["array"])),  # noqa: S308
        "targets": mark_safe("".join(cells["target"])),  # noqa: S308
    }


def _drill_down_url(route: str, name: str) -> str:
    """``reverse(route, args=[name])`` for the thousands of cells of a tile: the route
    reversed once, the name quoted as ``reverse`` quotes it."""
    return _route_pattern(route).replace(_NAME_PLACEHOLDER, quote(name, safe=_URL_SAFE))


_NAME_PLACEHOLDER = "name-placeholder"
_URL_SAFE = RFC3986_SUBDELIMS + "/~:@"


@functools.cache
def _route_pattern(route: str) -> str:
    return reverse(route, args=[_NAME_PLACEHOLDER])


def _cell_html(kind: str, name: str, status: str, title: str, text: str, url: str | None) -> str:
    """A coloured cell, every value escaped: a link to its drill-down page where there is one;
    the reasons on hover. Servers' and arrays' cells carry their kind as a class."""
    tag, where = ("a", f'href="{escape(url)}"') if url else ("span", 'tabindex="0"')
    extra = kind if kind in (NodeKind.SERVER, NodeKind.ARRAY) else ""
    return (
        f'<{tag} class="cell {escape(extra)} {escape(status)}" {where} '
        f'data-kind="{escape(kind)}" data-name="{escape(name)}" data-status="{escape(status)}" '
        f'title="{escape(title)}">{escape(text)}</{tag}>'
    )


@require_safe
def dashboard(request):
    context = _overview(request)
    # The charts need only the inventory: they show before the first evaluation.
    names = list(Filesystem.objects.values_list("name", flat=True))
    wanted = context["tree"]["name"] if context["tree"] else request.GET.get("fs")
    chart_filesystem = wanted if wanted in names else (names[0] if names else None)
    # The service tiles load after the page: asking the workers takes a couple of seconds.
    # A large filesystem's charts show its top OSTs and OSSs; choosing an SSU shows all of its.
    ssus = SSU.objects.filter(filesystem__name=chart_filesystem).order_by("name")
    context.update(
        ranges=list(CHART_RANGES),
        chart_filesystem=chart_filesystem,
        chart_ssus=list(ssus.values_list("name", flat=True)),
    )
    return render(request, "health/dashboard.html", context)


@require_safe
@condition(etag_func=overview_etag)
def overview_panel(request):
    """Status light, counts, SSU tiles and the latest changes, for the periodic refresh."""
    return render(request, "health/_overview.html", _overview(request))


# --- drill-down pages -------------------------------------------------------------------------


# Each page finds the health rows of its inventory object by the object's key, not its name.


def _status(row: Model) -> HealthStatus | None:
    return HealthStatus.objects.filter(key=object_key(row)).first()


def _history(row: Model):
    return StatusChange.objects.filter(key=object_key(row))[:HISTORY_LENGTH]


def _children(row: Model) -> list[HealthStatus]:
    return list(HealthStatus.objects.filter(parent_key=object_key(row)))


@require_safe
def ssu_detail(request, name: str):
    ssu = get_object_or_404(SSU.objects.select_related("pair", "filesystem"), name=name)
    children = _children(ssu)
    servers = _children(ssu.pair)
    return render(
        request,
        "health/ssu_detail.html",
        {
            "ssu": ssu,
            "status": _status(ssu),
            "servers": servers,
            "arrays": [c for c in children if c.kind == NodeKind.ARRAY],
            "targets": [c for c in children if c.kind == NodeKind.TARGET],
            "history": _history(ssu),
            "checked": last_checked(),
            "ranges": list(CHART_RANGES),
        },
    )


@require_safe
def server_detail(request, hostname: str):
    server = get_object_or_404(Server.objects.select_related("pair"), hostname=hostname)
    served = Target.objects.filter(primary_server=server) | Target.objects.filter(
        failover_server=server
    )
    keys = {object_key(t) for t in served}
    targets = list(HealthStatus.objects.filter(key__in=keys).order_by("name"))
    return render(
        request,
        "health/server_detail.html",
        {
            "server": server,
            "ssu": SSU.objects.filter(pair=server.pair_id).first() if server.pair_id else None,
            "status": _status(server),
            "targets": [t for t in targets if t.summary.get("server") == server.hostname],
            "history": _history(server),
            "checked": last_checked(),
            "ranges": list(CHART_RANGES),
            **_kernel_lines(server, server=server.hostname),
            "clients_url": reverse("health:server-clients", args=[server.hostname])
            if server.pair_id
            else None,
        },
    )


# A page's busiest clients come after it (``clients_url``): on a rack of 1,600 clients an OSS's
# hour of per-export stats is some 19,000 series, two seconds of InfluxDB's time, and the page
# should not wait for them.


def _clients_fragment(request, fs: str | None, metadata: bool, **where):
    """The busiest clients of one target (``target=``) or server (``server=``) of ``fs``; none
    without a filesystem."""
    found = clients.busiest(fs, metadata=metadata, **where) if fs else []
    context = {"busiest_clients": found, "clients_metadata": metadata}
    return render(request, "health/_busiest_clients.html", context)


@require_safe
def server_clients(request, hostname: str):
    """The busiest clients of the targets a server served in the last hour (a fragment)."""
    server = get_object_or_404(Server.objects.select_related("pair__filesystem"), hostname=hostname)
    fs = server.pair.filesystem.name if server.pair_id else None
    return _clients_fragment(request, fs, server.role != ServerRole.OSS, server=server.hostname)


def _has_clients(target: Target) -> bool:
    """Whether a target's page lists its busiest clients: an OST's or an MDT's, not the MGS's."""
    return target.kind in (TargetKind.OST, TargetKind.MDT)


@require_safe
def target_clients(request, label: str):
    """The busiest clients of an OST or an MDT in the last hour (a fragment)."""
    target = Target.objects.select_related("filesystem").filter(label=label).first()
    if target is None:
        raise Http404(f"no target {label}")
    return _clients_fragment(
        request,
        target.filesystem.name if _has_clients(target) else None,
        target.kind == TargetKind.MDT,
        target=schema.split_label(target.label)[1],
    )


@require_safe
def target_detail(request, label: str):
    target = (
        Target.objects.select_related(
            "volume_group__array", "primary_server", "failover_server", "filesystem"
        )
        .filter(label=label)
        .first()
    )
    if target is None:
        raise Http404(f"no target {label}")
    ssu = SSU.objects.filter(pair=target.primary_server.pair_id).first()
    subject = array_events.subject_of(target)
    return render(
        request,
        "health/target_detail.html",
        {
            "target": target,
            "ssu": ssu,
            "status": _status(target),
            "history": _history(target),
            "checked": last_checked(),
            "ranges": list(CHART_RANGES),
            "slowness": slowness.diagnose_target(target),
            "slowness_minutes": slowness.PAGE_WINDOW_SECONDS // 60,
            "array_events": array_events.recent_events(subject),
            "array_events_about": subject.label if subject else "",
            **_kernel_lines(target, target=target.label),
            "clients_url": reverse("health:target-clients", args=[target.label])
            if _has_clients(target)
            else None,
        },
    )


def _kernel_lines(row: Model, **search: str) -> dict:
    """A page's "What the kernel said": the object's lines of the last day, and the search
    that finds more of them."""
    subject = kernel_lines.subject_of(row)
    return {
        "kernel_lines": kernel_lines.recent_lines(subject),
        "client_troubles": kernel_lines.client_troubles(subject),
        "kernel_lines_about": subject.label if subject else "",
        "kernel_search": f"{reverse('health:kernel-log')}?{urlencode(search)}",
    }


@require_safe
def kernel_log(request):
    """The servers' Lustre and LNet kernel lines, newest first, filtered by server, target,
    message number, severity and time; a bad filter is named with its reason."""
    form = KernelLogFilter(request.GET or {"window": "24h"})
    context: dict = {"form": form, "lines": [], "storms": [], "limit": kernel_lines.SEARCH_LIMIT}
    if form.is_valid():
        since, until = form.span(time.time())
        which = form.line_filter()
        try:
            lines = kernel_lines.lines_about(which, since, until, kernel_lines.SEARCH_LIMIT)
            context["storms"] = kernel_lines.storms_about(which, since, until)
        except influx.InfluxError:
            lines = None
        context.update(
            lines=lines,
            since=datetime.fromtimestamp(since, UTC),
            until=datetime.fromtimestamp(until, UTC),
        )
        if lines and len(lines) == kernel_lines.SEARCH_LIMIT:
            # The next page ends at the oldest line shown (which it shows again).
            older = {k: v for k, v in request.GET.items() if k != "until"}
            older["until"] = localtime(lines[-1].at).strftime("%Y-%m-%dT%H:%M:%S")
            context["older"] = f"?{urlencode(older)}"
    return render(request, "health/kernel_log.html", context)


# --- thresholds -------------------------------------------------------------------------------


ThresholdForm = modelform_factory(HealthSettings, exclude=["updated"])


@require_http_methods(["GET", "HEAD", "POST"])
def thresholds(request):
    """Every role sees the thresholds; administrators change them."""
    return single_row_settings(
        request,
        ThresholdForm,
        HealthSettings.load(),
        template="health/thresholds.html",
        saved="Thresholds saved; the next evaluation uses them.",
        name="health:thresholds",
        context=lambda form: {
            "groups": [
                (title, [form[name] for name in names]) for title, names in HealthSettings.GROUPS
            ]
        },
    )


RetentionForm = modelform_factory(RetentionSettings, exclude=["updated"])


@require_http_methods(["GET", "HEAD", "POST"])
def retention(request):
    """Every role sees how long history is kept; administrators change it."""
    return single_row_settings(
        request,
        RetentionForm,
        RetentionSettings.load(),
        template="health/retention.html",
        saved="Retention saved; the next hourly pruning uses it.",
        name="health:retention",
    )


# --- chart data -------------------------------------------------------------------------------

# chart -> (kinds it is drawn for, function of (scope object, range seconds))
CHARTS = {
    "throughput": {"filesystem", "ssu", "server", "target"},
    "iops": {"filesystem", "ssu", "server", "target"},
    "capacity": {"filesystem", "ssu"},
    "oss-share": {"filesystem", "ssu"},
    "cpu": {"server"},
    "memory": {"server"},
    "temperatures": {"server"},
    "lnet": {"server"},
    "fill": {"target"},
    "io-sizes": {"target"},
}


def _scope(kind: str, name: str) -> charts.Scope:
    if kind == "filesystem":
        get_object_or_404(Filesystem, name=name)
        return charts.Scope.filesystem(name)
    if kind == "ssu":
        ssu = get_object_or_404(SSU.objects.select_related("pair"), name=name)
        return charts.Scope.servers(sorted(ssu.pair.servers.values_list("hostname", flat=True)))
    if kind == "server":
        get_object_or_404(Server, hostname=name)
        return charts.Scope.servers([name])
    if kind == "target":
        if not Target.objects.filter(label=name).exists():
            raise Http404(f"no target {name}")
        return charts.Scope.target(name)
    raise Http404(f"no such kind {kind}")


@require_safe
def chart_data(request, chart: str):
    kind = request.GET.get("kind", "")
    name = request.GET.get("name", "")
    if kind not in CHARTS.get(chart, set()):
        raise Http404(f"no chart {chart} for {kind or 'nothing'}")
    scope = _scope(kind, name)
    seconds = charts.range_seconds(request.GET.get("range"))
    key = f"health-chart:{settings.INFLUXDB_DATABASE}:{chart}:{kind}:{name}:{seconds}"
    try:
        # A time series draws no new point within a step (15 s for an hour), and is kept that
        # long up to a minute; capacity is the latest fill whatever the range.
        period = settings.HEALTH_CHART_CACHE_SECONDS
        if chart != "capacity":
            period = max(period, min(seconds // charts.POINTS_PER_CHART, 60))
        data = reused(
            key,
            period if settings.HEALTH_CHART_CACHE_SECONDS > 0 else 0,
            lambda: {**_chart(chart, kind, name, scope, seconds), "range": seconds},
        )
    except influx.InfluxError as error:
        # 503, not an empty chart: a script must not take the outage for a quiet rack.
        return JsonResponse({"error": influx.unavailable_message(error)}, status=503)
    return JsonResponse(data)


def _chart(chart: str, kind: str, name: str, scope: charts.Scope, seconds: int) -> dict:
    if chart == "throughput":
        return charts.throughput(scope, seconds)
    if chart == "iops":
        return charts.iops(scope, seconds)
    if chart == "capacity":
        body = charts.capacity(scope)
        for ost in body["osts"]:
            ost["url"] = reverse("health:target", args=[ost["label"]])
        return body
    if chart == "oss-share":
        body = charts.oss_share(scope, seconds)
        for server in body["servers"]:
            server["url"] = reverse("health:server", args=[server["server"]])
        return body
    if chart == "cpu":
        return charts.cpu(name, seconds)
    if chart == "memory":
        return charts.memory(name, seconds)
    if chart == "temperatures":
        return charts.temperatures(name, seconds)
    if chart == "lnet":
        return charts.lnet(name, seconds)
    if chart == "fill":
        return charts.target_fill(name, seconds)
    return charts.io_sizes(name, seconds)
