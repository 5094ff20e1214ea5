"""The console's pages: an act's confirmation (what Pacemaker will do) and start, an array's
drives and a drive's replacement, Lustre parameters across servers, and the audit log."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from portal.accounts.choices import Role
from portal.accounts.services import has_role
from portal.console.choices import Act, ObjectKind
from portal.console.forms import ActForm, AuditFilterForm, ParameterForm
from portal.console.models import AuditEntry, DriveReplacement
from portal.console.services import (
    Author,
    ConfirmationNeeded,
    ConsoleError,
    Refused,
    cluster,
    drives,
    params,
)
from portal.health.services import array_events
from portal.inventory.models import Drive, Filesystem, StorageArray


def _operator(request) -> None:
    if not has_role(request.user, Role.OPERATOR):
        raise PermissionDenied("the console's acts need the operator role")


@require_http_methods(["GET", "HEAD", "POST"])
def server_act(request, hostname: str, act: str):
    return _act(request, ObjectKind.SERVER, hostname, act)


@require_http_methods(["GET", "HEAD", "POST"])
def target_act(request, label: str, act: str):
    return _act(request, ObjectKind.TARGET, label, act)


def _act(request, kind: str, name: str, slug: str):
    _operator(request)
    act = cluster.ACT_SLUGS.get(slug)
    if act is None or (kind == ObjectKind.TARGET and act not in (Act.FAILOVER, Act.FAILBACK)):
        raise Http404(f"no act {slug!r} for a {kind}")
    try:
        subject = cluster.subject_of(kind, name)
    except ConsoleError as error:
        raise Http404(str(error)) from None
    form = ActForm(request.POST or None, act=act)
    page = {"act": Act(act), "kind": kind, "subject": subject, "name": name, "form": form}
    answer_in_place = request.headers.get("HX-Request") == "true"
    if request.method != "POST" and not answer_in_place:
        # Working the act out reads the pair's live cluster (a playbook) and asks Pacemaker's
        # scheduler: seconds. The page answers at once and loads that answer in place.
        return render(request, "console/act.html", {**page, "pair": cluster.pair_of(subject).name})
    proposal, reasons, status = None, [], 200
    confirmed = request.method == "POST" and form.is_valid()
    options = form.cleaned_data if confirmed else {}
    try:
        job = cluster.start(
            act,
            subject,
            Author.of_request(request),
            confirmed=confirmed,
            lifetime=options.get("lifetime") or None,
            hours=options.get("hours"),
            reason=options.get("reason") or "",
        )
    except ConfirmationNeeded as needed:
        proposal = needed.proposal
        status = 400 if request.method == "POST" else 200
    except Refused as refused:
        reasons, status = refused.reasons, 409
    except ConsoleError as error:
        if error.field in form.fields:
            form.add_error(error.field, str(error))
        else:
            reasons = [str(error)]
        status = 400
    else:
        return redirect("jobs:job-detail", pk=job.pk)
    answer = {**page, "proposal": proposal, "reasons": reasons, "answered": True}
    if answer_in_place:  # htmx swaps only a 2xx answer in
        return render(request, "console/_act_answer.html", answer)
    return render(request, "console/act.html", answer, status=status)


@require_safe
def array_detail(request, name: str):
    array = get_object_or_404(StorageArray.objects.select_related("pair"), name=name)
    enclosures = []
    for enclosure in array.enclosures.select_related("model").order_by("position"):
        by_drawer: dict[int, list[tuple[Drive, str]]] = {}
        for drive in enclosure.drives.select_related("volume_group").order_by("drawer", "slot"):
            address = f"{enclosure.position},{drive.drawer},{drive.slot}"
            by_drawer.setdefault(drive.drawer, []).append((drive, address))
        enclosures.append((enclosure, sorted(by_drawer.items())))
    replacements = DriveReplacement.objects.filter(drive__enclosure__array=array).select_related(
        "drive__enclosure", "job"
    )[:20]
    return render(
        request,
        "console/array.html",
        {
            "array": array,
            "enclosures": enclosures,
            "groups": array.volume_groups.prefetch_related("targets"),
            "replacements": replacements,
            "can_act": has_role(request.user, Role.OPERATOR),
            "array_events": array_events.recent_events(array_events.subject_of(array)),
            "array_events_about": f"array {array.name}",
        },
    )


@require_http_methods(["GET", "HEAD", "POST"])
def drive_replace(request, name: str, address: str):
    """A failed drive's workflow: identify it, confirm the new one is in, watch the array."""
    array = get_object_or_404(StorageArray, name=name)
    drive = drives.drive_at(array, address)
    if drive is None:
        raise Http404(f"no drive {address} in {name}")
    replacement = drives.open_replacement(drive) or drives.latest_replacement(drive)
    operator = has_role(request.user, Role.OPERATOR)
    if request.method == "POST":
        _operator(request)
    step = request.POST.get("step") if request.method == "POST" else None
    proposal, error = None, None
    if step:
        author = Author.of_request(request)
        try:
            if step == "locate":
                drives.start_locate(drive, author, confirmed=True)
            elif step == "replaced":
                drives.start_replacement(drive, author, confirmed=True)
            else:
                raise ConsoleError("step", f"unknown step {step!r}")
        except ConsoleError as refusal:
            error = str(refusal)
        except ConfirmationNeeded as needed:  # pragma: no cover - confirmed above
            proposal = needed.proposal
        else:
            return redirect("console:drive", name=array.name, address=address)
    context = {
        "array": array,
        "drive": drive,
        "address": address,
        "replacement": replacement,
        "error": error,
        "proposal": proposal,
        "offers": drives.offers(drive, replacement) if operator else {},
    }
    if not request.headers.get("HX-Request"):  # the page, not its 2-second refresh
        subject = array_events.subject_of(drive)
        context["array_events"] = array_events.recent_events(subject)
        context["array_events_about"] = subject.label if subject else ""
    if request.headers.get("HX-Request"):
        return render(request, "console/_replacement.html", context)
    return render(request, "console/drive.html", context, status=400 if error else 200)


@require_http_methods(["GET", "HEAD", "POST"])
def parameters(request):
    """Read a parameter on every server (a short job: the page shows it under way, htmx asks
    again until the values are in) and, as an operator, change it."""
    if request.method == "POST":
        _operator(request)  # before the form: a viewer's POST is refused, not corrected
    filesystems = list(Filesystem.objects.order_by("name").values_list("name", flat=True))
    data = request.POST if request.method == "POST" else request.GET
    chosen = Filesystem.objects.filter(
        name=data.get("filesystem") or (filesystems or [""])[0]
    ).first()
    servers = [s.hostname for s in params.servers_of(chosen)] if chosen else []
    form = ParameterForm(data or None, filesystems=filesystems, servers=servers)
    reading, proposal, status, retry_after = None, None, 200, None
    if data.get("name") and form.is_valid() and chosen is not None:
        values = form.cleaned_data
        try:
            if request.method == "POST":
                job = params.start_set(
                    chosen,
                    values["name"],
                    values["value"],
                    Author.of_request(request),
                    hosts=values["servers"],
                    permanent=values["permanent"],
                    confirmed=bool(request.POST.get("confirm")),
                )
                return redirect("jobs:job-detail", pk=job.pk)
            reading = params.request_reading(chosen, values["name"], Author.of_request(request))
        except ConfirmationNeeded as needed:
            proposal = needed.proposal
        except params.ReadsTooOften as refusal:
            form.add_error("name", str(refusal))
            status, retry_after = 429, refusal.retry_after
        except ConsoleError as error:
            form.add_error(error.field if error.field in form.fields else None, str(error))
            status = 400
    context = {
        "form": form,
        "reading": reading,
        "fresh_seconds": settings.OSTARA_PARAM_READ_FRESH_SECONDS,
        "proposal": proposal,
        "can_act": has_role(request.user, Role.OPERATOR),
    }
    if reading is not None and request.headers.get("HX-Request"):
        return render(request, "console/_reading.html", context)
    response = render(request, "console/parameters.html", context, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


@require_safe
def audit_log(request):
    form = AuditFilterForm(request.GET or None)
    entries = AuditEntry.objects.select_related("job", "reverts")
    if form.is_valid():
        entries = filter_entries(entries, **form.cleaned_data)
    page = Paginator(entries, 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "console/audit.html",
        {
            "form": form,
            "page": page,
            "query": query.urlencode(),
            "can_act": has_role(request.user, Role.OPERATOR),
        },
    )


def filter_entries(entries, *, user=None, act=None, object=None, since=None, until=None):
    """The audit log's filters, shared by the page and the API."""
    if user:
        entries = entries.filter(username__iexact=user)
    if act:
        entries = entries.filter(act=act)
    if object:
        entries = entries.filter(object_name__icontains=object)
    if since:
        entries = entries.filter(created__date__gte=since)
    if until:
        entries = entries.filter(created__date__lte=until)
    return entries


@require_http_methods(["GET", "HEAD", "POST"])
def audit_revert(request, pk: int):
    _operator(request)
    entry = get_object_or_404(AuditEntry, pk=pk)
    proposal, error = None, None
    try:
        job = params.start_revert(
            entry, Author.of_request(request), confirmed=request.method == "POST"
        )
    except ConfirmationNeeded as needed:
        proposal = needed.proposal
    except ConsoleError as refusal:
        error = str(refusal)
    else:
        return redirect("jobs:job-detail", pk=job.pk)
    return render(
        request,
        "console/revert.html",
        {"entry": entry, "proposal": proposal, "error": error},
        status=400 if error else 200,
    )
