"""The Analytics section: load balance, OST fill, striping, access patterns and capacity
forecast of one window, and the settings they use. The window and the filesystem are URL
parameters on every page, so a view is shared by its link; the numbers come from
``services.report``."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from django.forms import modelform_factory
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from metrics import chart_rows
from portal import influxdb as influx
from portal.analytics import cached, choices, services
from portal.analytics.models import AnalyticsSettings
from portal.inventory.models import Filesystem
from portal.single_row.page import single_row_settings
from portal.web.numbers import format_bytes
from portal.web.query_numbers import BadParameter, epoch_seconds
from sensors import schema


@require_safe
def index(request):
    query = request.GET.urlencode()
    return redirect(reverse("analytics:view", args=["load"]) + (f"?{query}" if query else ""))


@require_safe
def view(request, name: str):
    if name not in dict(choices.VIEWS):
        raise Http404(f"no analytics view {name!r}")
    context = {"view": name, "views": _tabs(request, name), "windows": list(choices.WINDOWS)}
    try:
        window = services.parse_window(request.GET)
        filesystem = services.filesystem_of(request.GET)
    except BadParameter as error:
        context.update(error=str(error), field=error.field, window=None)
        return render(request, "analytics/view.html", context, status=400)
    context.update(window=window, filesystem=filesystem, query=_query(window, filesystem))
    context["filesystems"] = list(
        Filesystem.objects.order_by("name").values_list("name", flat=True)
    )
    try:
        report = cached.report(window, filesystem)
    except influx.InfluxError as error:
        # The page answers, saying since when; its links and the window stay usable.
        context["error"] = influx.unavailable_message(error)
        return render(request, "analytics/view.html", context)
    context["report"] = report
    context["computed"] = _time(report["cached"]["computed_at"]) if report["cached"] else None
    context["error"] = report.get("unavailable")
    context.update(PAGES[name](report))
    return render(request, f"analytics/{name}.html", context)


def _query(window: services.Window, filesystem: Filesystem | None) -> str:
    params = window.query()
    if filesystem:
        params["fs"] = filesystem.name
    return urlencode(params)


def _tabs(request, current: str) -> list[dict]:
    query = request.GET.urlencode()
    return [
        {
            "label": label,
            "url": reverse("analytics:view", args=[name]) + (f"?{query}" if query else ""),
            "active": name == current,
        }
        for name, label in choices.VIEWS
    ]


# --- what each page shows besides the report ----------------------------------------------------


def target_url(label: str) -> str:
    if not label or schema.is_mgs_label(label):
        return ""
    return reverse("health:target", args=[label])


def server_url(hostname: str) -> str:
    return reverse("health:server", args=[hostname]) if hostname else ""


def _load(report: dict) -> dict:
    overloaded = set(report["overloaded"])
    rows = [
        {**row, "url": server_url(row["server"]), "overloaded": row["server"] in overloaded}
        for row in report["oss"]
    ]
    slow = [{**entry, "url": target_url(entry["target"])} for entry in report["slow_at_array"]]
    slow_labels = {entry["target"] for entry in slow}
    detail = [
        {
            **entry,
            "url": server_url(entry["server"]),
            "since_time": _time(entry["since"]),
            "osts": [
                {**o, "url": target_url(o["target"]), "slow_at_array": o["target"] in slow_labels}
                for o in entry["osts"]
            ],
        }
        for entry in report["overloaded_detail"]
    ]
    return {
        "rows": rows,
        "detail": detail,
        "slow_at_array": slow,
        "oss_map": _heatmap(report["heatmap"]["oss"], server_url),
        "ost_map": _heatmap(report["heatmap"]["ost"], target_url),
        "share_chart": _share_chart(rows),
    }


def _share_chart(rows: list[dict]) -> dict:
    shares = [{**row, "share_percent": round(100 * row["share"], 2)} for row in rows]
    bars = chart_rows.top_bars(shares, "server", "share_percent")
    note = "each OSS's share of the bytes read and written in the window"
    if bars["others"]:
        note = (
            f"the {len(rows) - bars['others']} busiest of {len(rows)} OSSs' shares of the bytes "
            f"read and written in the window, and the others' mean; the OSS table has them all"
        )
    return _percent_bars(bars, "share", note, "OSS")


def _heatmap(grid: dict, url) -> dict:
    """Rows of cells with their colour strength (0–1 of the hottest cell) and the cell's time
    range, for the template to draw as a grid of links."""
    peak = grid["max"] or 1.0
    step = grid["step"]
    return {
        "times": [_time(t) for t in grid["times"]],
        "step": step,
        "rows": [
            {
                "name": row["name"],
                "url": url(row["name"]),
                "cells": [
                    {
                        "rate": value,
                        "level": min(1.0, value / peak),
                        "start": int(start),
                        "end": int(start + step),
                    }
                    for start, value in zip(grid["times"], row["values"], strict=True)
                ],
            }
            for row in grid["rows"]
        ],
    }


def _fill(report: dict) -> dict:
    fill = report["ost_fill"]
    osts = [{**row, "url": target_url(row["target"])} for row in fill.get("osts", [])]
    return {
        "fill": fill,
        "osts": osts,
        "fill_chart": _fill_chart(fill, osts),
    }


def _fill_chart(fill: dict, osts: list[dict]) -> dict:
    bars = chart_rows.top_bars(osts, "target", "fill_percent")
    note = f"mean {fill.get('mean_percent')} %; spread {fill.get('spread_points')} points"
    if bars["others"]:
        shown = len(osts) - bars["others"]
        note = f"the {shown} fullest of {len(osts)} OSTs and the others' mean; {note}"
    return _percent_bars(bars, "fill", note, "OST")


def _percent_bars(bars: dict, name: str, note: str, xlabel: str) -> dict:
    """The page's "bars" chart (portal/health.js) of ``chart_rows.top_bars``, in percent;
    ``xlabel`` names a bar in the legend ("OSS: oss01")."""
    return {
        "labels": bars["labels"],
        "xlabel": xlabel,
        "series": {name: bars["values"]},
        "links": bars["links"],
        "unit": "%",
        "max": 100,
        "note": note,
    }


def _striping(report: dict) -> dict:
    return {"flagged": report["striping"]}


def _access(report: dict) -> dict:
    sizes = report["io_size"]
    histogram = sizes["histogram"]
    return {
        "sizes": sizes,
        "per_ssu": sorted(
            ({"name": name, **row} for name, row in sizes.get("per_ssu", {}).items()),
            key=lambda row: -(row["small_share"] or 0),
        ),
        "per_ost": sorted(
            (
                {"name": name, "url": target_url(name), **row}
                for name, row in sizes["per_ost"].items()
            ),
            key=lambda row: -(row["small_share"] or 0),
        ),
        "top_jobs": report["top_jobs"],
        "top_jobs_by_ops": report["top_jobs_by_ops"],
        "top_clients": report["top_clients"],
        "top_clients_by_ops": report["top_clients_by_ops"],
        "size_chart": {
            "labels": [format_bytes(row["bytes"]) for row in histogram],
            "xlabel": "I/O size",
            "series": {
                "read": [row["read_ios"] for row in histogram],
                "write": [row["write_ios"] for row in histogram],
            },
            "unit": "I/Os",
            "note": f"I/O sizes in the window ({sizes['section'] or 'no brw_stats'})",
        },
    }


def _capacity(report: dict) -> dict:
    capacity = report["capacity"]
    osts = [
        {
            "target": label,
            "url": target_url(label),
            **forecast,
            "warning_time": _time(forecast["warning_at"]),
            "critical_time": _time(forecast["critical_at"]),
        }
        for label, forecast in capacity["osts"].items()
    ]
    whole = capacity["filesystem"]
    return {
        "capacity": capacity,
        "whole": {
            **whole,
            "warning_time": _time(whole["warning_at"]),
            "critical_time": _time(whole["critical_at"]),
        },
        "osts": sorted(osts, key=lambda row: (row["critical_at"] or 9e18, row["target"])),
    }


PAGES = {
    "load": _load,
    "fill": _fill,
    "striping": _striping,
    "access": _access,
    "capacity": _capacity,
}


def _time(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, tz=UTC) if epoch is not None else None


# --- the jobs of one heat-map cell ------------------------------------------------------------


@require_safe
def cell(request):
    """The jobs that moved bytes through one server or OST in one step of the heat map."""
    by = request.GET.get("by", "server")
    name = request.GET.get("name", "")
    try:
        start = epoch_seconds("start", request.GET.get("start", ""))
        end = epoch_seconds("end", request.GET.get("end", ""))
        if end - start > services.MAX_WINDOW_SECONDS:
            raise BadParameter("end", "a cell is at most a year long")
    except BadParameter as error:
        return HttpResponseBadRequest(str(error), content_type="text/plain; charset=utf-8")
    if by not in ("server", "target") or not name or end <= start:
        raise Http404("a cell is a server or a target and a time range")
    try:
        filesystem = services.filesystem_of(request.GET)
    except services.WindowError as error:
        raise Http404(str(error)) from None
    since, jobs = services.cell_jobs(filesystem, by, name, start, end)
    return render(
        request,
        "analytics/_cell.html",
        {
            "by": by,
            "name": name,
            "start": _time(since),
            "end": _time(end),
            "jobs": jobs,
            "seconds": end - since,
        },
    )


# --- settings -----------------------------------------------------------------------------------

SettingsForm = modelform_factory(AnalyticsSettings, exclude=["updated"])


@require_http_methods(["GET", "HEAD", "POST"])
def analytics_settings(request):
    """Every role sees them; administrators change them."""
    return single_row_settings(
        request,
        SettingsForm,
        AnalyticsSettings.load(),
        template="analytics/settings.html",
        saved="Analytics settings saved.",
        name="analytics:settings",
    )
