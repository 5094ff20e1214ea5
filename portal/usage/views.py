"""The Usage section: per filesystem and window, the top users, groups and projects, their
growth and forecasts, the owners over their soft limit and whose data fills each OST; and the
page of the id -> name maps. The numbers come from ``services.report``."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from metrics import chart_rows
from portal import influxdb as influx
from portal.accounts.choices import Role
from portal.accounts.services import has_role
from portal.inventory.models import Filesystem
from portal.usage import choices, maths, services
from portal.usage.forms import NamesForm
from portal.usage.models import OwnerName
from portal.web.query_numbers import BadParameter
from sensors import schema

KIND_TITLES = {"user": "Users", "group": "Groups", "project": "Projects"}
UNIT_TITLES = {"kbytes": "space", "inodes": "files"}


@require_safe
def index(request):
    context = {"windows": list(choices.WINDOWS)}
    try:
        window = services.parse_window(request.GET)
        filesystem = services.filesystem_of(request.GET)
    except BadParameter as error:
        context.update(error=str(error), field=error.field, window=None)
        return render(request, "usage/usage.html", context, status=400)
    params = window.query()
    if filesystem:
        params["fs"] = filesystem.name
    context.update(window=window, filesystem=filesystem, query=urlencode(params))
    context["filesystems"] = list(
        Filesystem.objects.order_by("name").values_list("name", flat=True)
    )
    try:
        report = services.report(window, filesystem)
    except influx.InfluxError as error:
        context["error"] = influx.unavailable_message(error)
        return render(request, "usage/usage.html", context)
    context["report"] = report
    context["tables"] = [
        {
            "kind": kind,
            "unit": unit,
            "title": f"{KIND_TITLES[kind]} by {UNIT_TITLES[unit]}",
            "rows": [_shown(row, unit) for row in report["top"][kind][unit]],
        }
        for kind in maths.KINDS
        for unit in maths.UNITS
    ]
    context["over_soft"] = [_shown(row, "kbytes") for row in report["over_soft"]]
    context["osts"] = [_ost(filesystem, entry) for entry in report["osts"]]
    context["growth_chart"] = _growth_chart(report["top"]["user"]["kbytes"])
    return render(request, "usage/usage.html", context)


def fs_target(filesystem: Filesystem | None, target: str) -> str:
    return schema.target_label(filesystem.name, target) if filesystem else target


def _target_url(label: str) -> str:
    return reverse("health:target", args=[label]) if label else ""


def _ost(filesystem: Filesystem | None, entry: dict) -> dict:
    return {
        **entry,
        "label": fs_target(filesystem, entry["target"]),
        "url": _target_url(fs_target(filesystem, entry["target"])),
        "space": entry["kbytes"] * 1024,
        "owners": {
            kind: [
                {**owner, "label": services.label(owner), "space": owner["kbytes"] * 1024}
                for owner in owners
            ]
            for kind, owners in entry["owners"].items()
        },
    }


def _time(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, tz=UTC) if epoch is not None else None


def _shown(row: dict, unit: str) -> dict:
    """A row with its dates as times for the template, and the owner as people name it."""
    shown = {**row, "label": services.label(row), "unit": unit}
    # Space in bytes, as the pages write sizes (|bytes); the points count KiB.
    for name in ("kbytes", "kbytes_growth", "kbytes_per_day", "kbytes_hard", "kbytes_soft"):
        shown[name.replace("kbytes", "space")] = None if row[name] is None else row[name] * 1024
    for name in maths.UNITS:
        shown[f"{name}_limit_time"] = _time(row[f"{name}_limit_at"])
        state = row[f"{name}_over_soft"]
        if state:
            shown[f"{name}_grace_time"] = _time(state["grace_ends"])
    if row["capacity"]:
        shown["warning_time"] = _time(row["capacity"]["warning_at"])
        shown["critical_time"] = _time(row["capacity"]["critical_at"])
    return shown


def _growth_chart(rows: list[dict]) -> dict:
    """The "bars" chart (portal/health.js) of the top users' growth of space in the window."""
    shown = [row for row in rows if row["kbytes_growth"] is not None]
    bars = chart_rows.top_bars(
        [
            {"owner": services.label(row), "growth": round(row["kbytes_growth"] / 2**20, 3)}
            for row in shown
        ],
        "owner",
        "growth",
    )
    return {
        "labels": bars["labels"],
        "xlabel": "User",
        "series": {"growth": bars["values"]},
        "links": bars["links"],
        "unit": "GiB",
        "note": "the space each of the top users gained (or freed) in the window",
    }


@require_http_methods(["GET", "HEAD", "POST"])
def owner_names(request):
    """Every role sees how many ids are named; administrators upload or read the maps."""
    can_change = has_role(request.user, Role.ADMIN)
    form = NamesForm()
    if request.method == "POST":
        if not can_change:
            raise PermissionDenied("only administrators change the names of ids")
        form = NamesForm(request.POST, request.FILES)
        if form.is_valid():
            kind = form.cleaned_data["kind"]
            if form.cleaned_data["source"] == "nss":
                count = services.read_nss_names(kind)
                said = "read from this server's NSS"
            else:
                count = services.store_names(
                    kind, form.cleaned_data["names"], choices.NameSource.UPLOAD
                )
                said = "uploaded"
                repeats = form.cleaned_data.get("repeats") or []
                if repeats:  # the first three say which; the count says how many
                    shown = "; ".join(repeats[:3]) + ("; …" if len(repeats) > 3 else "")
                    ids = "id" if len(repeats) == 1 else "ids"
                    said += f"; {len(repeats):,} {ids} listed again kept the first name ({shown})"
            messages.success(request, f"{count:,} {kind} names {said}.")
            return redirect("usage:names")
    counts = {
        (row["kind"], row["source"]): row["count"]
        for row in OwnerName.objects.values("kind", "source").annotate(count=Count("pk"))
    }
    stored = [
        {
            "kind": label,
            "sources": [
                {"source": source_label, "count": counts[(kind, source)]}
                for source, source_label in choices.NameSource.choices
                if (kind, source) in counts
            ],
        }
        for kind, label in choices.NamedKind.choices
    ]
    return render(
        request,
        "usage/names.html",
        {"form": form, "can_change": can_change, "stored": stored},
    )
