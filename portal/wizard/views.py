"""The add-an-SSU wizard: filesystem, servers, arrays, review and confirm.

Every step posts, checks its own fields, stores the answers in the session draft and redirects
(post/redirect/get), so back and reload are safe. Nothing is written before confirm.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from portal.inventory.choices import PairKind
from portal.inventory.models import Filesystem, ServerPair, server_claims
from portal.inventory.services import preview_plans
from portal.surveys.services import usage_warnings
from portal.wizard import forms
from portal.wizard.choices import FilesystemMode, WizardStep
from portal.wizard.services import (
    Draft,
    enclosure_pictures,
    failover_map,
    pacemaker_summary,
    spec_refusals,
    start_provisioning,
)
from provisioning.planner import SpecError, make_plan

may_provision = permission_required("inventory.add_ssu", raise_exception=True)

STEP_URLS = {
    WizardStep.FILESYSTEM: "wizard:filesystem",
    WizardStep.SERVERS: "wizard:servers",
    WizardStep.ARRAYS: "wizard:arrays",
    WizardStep.REVIEW: "wizard:review",
}


def _render(request, template: str, draft: Draft, step: str, context: dict):
    steps = [
        {
            "key": key,
            "label": key.label,
            "url": reverse(STEP_URLS[key]),
            "done": draft.done(key) or key == step,
            "current": key == step,
        }
        for key in WizardStep
    ]
    return render(request, template, {"draft": draft, "steps": steps, "step": step, **context})


@require_safe
@may_provision
def start(request):
    return redirect(STEP_URLS[Draft(request.session).first_missing_step()])


@require_http_methods(["GET", "HEAD", "POST"])
@may_provision
def filesystem_step(request):
    draft = Draft(request.session)
    saved = draft.data.get("filesystem", {})
    if request.method == "POST":
        form = forms.FilesystemForm(request.POST)
        if form.is_valid():
            mode = form.cleaned_data["mode"]
            if saved.get("mode") != mode:
                draft.mark_done(WizardStep.SERVERS, False)  # the servers asked for differ
            draft.data["filesystem"] = {"mode": mode, "name": form.filesystem_name}
            draft.mark_done(WizardStep.FILESYSTEM)
            draft.save()
            return redirect("wizard:servers")
    else:
        initial = {
            "mode": saved.get("mode")
            or (FilesystemMode.EXISTING if Filesystem.objects.exists() else FilesystemMode.NEW)
        }
        if saved.get("mode") == FilesystemMode.EXISTING:
            initial["existing"] = saved.get("name")
        elif saved.get("mode") == FilesystemMode.NEW:
            initial["new_name"] = saved.get("name")
        form = forms.FilesystemForm(initial=initial)
    return _render(request, "wizard/filesystem.html", draft, WizardStep.FILESYSTEM, {"form": form})


def _server_forms(draft: Draft, group: str, data=None) -> tuple:
    servers = draft.servers_of(group)
    default_name = draft.data.get("servers", {}).get(group, {}).get("name") or _next_name(group)
    name_form = forms.PairNameForm(data, prefix=group, initial={"name": default_name})
    server_forms = []
    for position in range(2):
        initial = dict(servers[position]) if position < len(servers) else {}
        initial.pop("bmc_password", None)
        if isinstance(initial.get("nids"), list):
            initial["nids"] = ", ".join(initial["nids"])
        server_forms.append(
            forms.ServerForm(
                data,
                prefix=f"{group}{position}",
                initial=initial,
                has_password=draft.has_password(group, position),
            )
        )
    return name_form, server_forms


def _next_name(group: str) -> str:
    prefix = "ssu" if group == PairKind.OSS else "mds"  # a name, not a kind
    taken = set(ServerPair.objects.values_list("name", flat=True))
    number = 1
    while f"{prefix}{number:02d}" in taken:
        number += 1
    return f"{prefix}{number:02d}"


@require_http_methods(["GET", "HEAD", "POST"])
@may_provision
def servers_step(request):
    draft = Draft(request.session)
    if not draft.done(WizardStep.FILESYSTEM):
        return redirect("wizard:filesystem")
    groups = [PairKind.MDS, PairKind.OSS] if draft.new_filesystem else [PairKind.OSS]
    data = request.POST if request.method == "POST" else None
    pairs = {group: _server_forms(draft, group, data) for group in groups}
    mdt_form = None
    if draft.new_filesystem:
        mdt_initial = draft.data.get("servers", {}).get("mdt_array") or {
            "name": f"{pairs['mds'][0].initial['name']}-a",
            "controller": "E2724",
            "drive_tb": 1.2,
        }
        mdt_initial = {**mdt_initial, **forms.management_initial(mdt_initial)}
        mdt_form = forms.MdtArrayForm(data, prefix="mdt", initial=mdt_initial)

    if request.method == "POST":
        every_form = [
            form
            for name_form, server_forms in pairs.values()
            for form in (name_form, *server_forms)
        ] + ([mdt_form] if mdt_form else [])
        if (
            mdt_form
            and mdt_form.is_valid()
            and draft.needs_monitor_password(
                PairKind.MDS,
                [mdt_form.management_spec()],
                mdt_form.cleaned_data["monitor_password"],
            )
        ):
            mdt_form.add_error("monitor_password", MONITOR_PASSWORD_NEEDED)
        if all(form.is_valid() for form in every_form) and _unique_across(pairs):
            for group, (name_form, server_forms) in pairs.items():
                draft.store_servers(
                    group,
                    name_form.cleaned_data["name"],
                    [form.cleaned_data for form in server_forms],
                )
            if mdt_form:
                draft.data["servers"]["mdt_array"] = {
                    "name": mdt_form.cleaned_data["name"],
                    "controller": mdt_form.cleaned_data["controller"],
                    "drive_tb": float(mdt_form.cleaned_data["drive_tb"]),
                    **mdt_form.management_spec(),
                }
                typed = mdt_form.cleaned_data["monitor_password"]
                draft.store_monitor_password(PairKind.MDS, typed)
            draft.mark_done(WizardStep.SERVERS)
            draft.save()
            return redirect("wizard:arrays")
    return _render(
        request,
        "wizard/servers.html",
        draft,
        WizardStep.SERVERS,
        {"pairs": pairs, "mdt_form": mdt_form},
    )


def _unique_across(pairs: dict) -> bool:
    """Pair names must differ between the MDS pair and the SSU; host names, NIDs, BMC addresses
    and PDU outlets between every server of the draft and of the inventory (``server_claims``).
    """
    ok = True
    pair_names: set[str] = set()
    for name_form, _ in pairs.values():
        if name_form.cleaned_data["name"] in pair_names:
            name_form.add_error("name", "the MDS pair and the SSU need different names")
            ok = False
        pair_names.add(name_form.cleaned_data["name"])
    server_forms = [form for _, forms_of_pair in pairs.values() for form in forms_of_pair]
    servers = [{**form.cleaned_data, "label": form.prefix} for form in server_forms]
    for form, claims in zip(server_forms, server_claims(servers), strict=True):
        for field, message in claims.items():
            form.add_error(field, message)
            ok = False
    return ok


@require_http_methods(["GET", "HEAD", "POST"])
@may_provision
def arrays_step(request):
    draft = Draft(request.session)
    if not draft.done(WizardStep.SERVERS):
        return redirect("wizard:servers")
    ssu_name = draft.data["servers"][PairKind.OSS]["name"]
    stored = draft.data.get("arrays")
    if request.method == "POST":
        layout_form = forms.LayoutForm(request.POST)
        formset = forms.ArrayFormSet(request.POST, prefix="arrays")
        if request.POST.get("action") == "add":
            formset = _with_one_more(request.POST, ssu_name)
            layout_form = forms.LayoutForm(initial=request.POST.dict())
        elif layout_form.is_valid() and formset.is_valid():
            arrays = [form.to_spec() for form in formset if form.cleaned_data]
            candidate = {
                "segment_kib": layout_form.cleaned_data["segment_kib"],
                "first_ost_index": layout_form.cleaned_data["first_ost_index"],
                "arrays": arrays,
            }
            draft.data["arrays"] = candidate
            typed = layout_form.cleaned_data["monitor_password"]
            if draft.needs_monitor_password(PairKind.OSS, arrays, typed):
                layout_form.add_error("monitor_password", MONITOR_PASSWORD_NEEDED)
            draft.store_monitor_password(PairKind.OSS, typed)
            if layout_form.is_valid() and _plans_cleanly(draft, layout_form, formset):
                draft.mark_done(WizardStep.ARRAYS)
                draft.save()
                return redirect("wizard:review")
    else:
        first_index = 0
        if not draft.new_filesystem:
            filesystem = Filesystem.objects.filter(name=draft.filesystem_name).first()
            first_index = filesystem.next_ost_index() if filesystem else 0
        layout_form = forms.LayoutForm(
            initial={
                "segment_kib": (stored or {}).get("segment_kib", 128),
                "first_ost_index": (stored or {}).get("first_ost_index", first_index),
            }
        )
        initial = [_array_initial(a) for a in (stored or {}).get("arrays", [])] or [
            _array_initial(
                {
                    "name": f"{ssu_name}-{suffix}",
                    "controller": "E5560",
                    "expansions": ["DE6600"],
                    "drive_tb": 4,
                }
            )
            for suffix in "ab"
        ]
        formset = forms.ArrayFormSet(prefix="arrays", initial=initial)
    return _render(
        request,
        "wizard/arrays.html",
        draft,
        WizardStep.ARRAYS,
        {"layout_form": layout_form, "formset": formset},
    )


def _array_initial(entry: dict) -> dict:
    expansions = entry.get("expansions", [])
    return {
        "name": entry.get("name"),
        "controller": entry.get("controller"),
        "expansion_model": expansions[0] if expansions else "",
        "expansion_count": len(expansions),
        "drive_tb": entry.get("drive_tb"),
        "global_spares": entry.get("global_spares"),
        **forms.management_initial(entry),
    }


def _with_one_more(post, ssu_name: str):
    """The arrays entered so far, unchecked, plus one more like the first."""
    total = int(post.get("arrays-TOTAL_FORMS", 1))
    fields = forms.ArrayForm.base_fields
    initial = [
        {field: post.get(f"arrays-{n}-{field}", "") for field in fields} for n in range(total)
    ]
    initial.append(
        {
            "name": f"{ssu_name}-{'abcdefgh'[min(total, 7)]}",
            "controller": "E5560",
            "expansion_model": "DE6600",
            "expansion_count": 1,
            "drive_tb": initial[0].get("drive_tb") or 4,
        }
    )
    return forms.ArrayFormSet(prefix="arrays", initial=initial)


MONITOR_PASSWORD_NEEDED = (
    "the array collector logs in to the arrays whose controllers' addresses are given with "
    "this password"
)
ARRAY_FIELD_FOR = {
    "controller": "controller",
    "expansions": "expansion_model",
    "drive_tb": "drive_tb",
    "global_spares": "global_spares",
    "name": "name",
    "management": "management_a",
}


def _plans_cleanly(draft: Draft, layout_form, formset) -> bool:
    """Run the planner on the SSU as entered and put its complaints next to the fields."""
    try:
        make_plan(draft.ssu_spec())
    except SpecError as error:
        for path, message in error.errors.items():
            if path.startswith("arrays["):
                position = int(path[len("arrays[") : path.index("]")])
                field = ARRAY_FIELD_FOR.get(path.split(".", 1)[-1].split("[")[0])
                form = formset.forms[position] if position < len(formset.forms) else None
                if form is not None:
                    form.add_error(field if field in (form.fields or {}) else None, message)
                    continue
            if path in layout_form.fields:
                layout_form.add_error(path, message)
            else:
                layout_form.add_error(None, f"{path}: {message}")
        return False
    return True


@require_http_methods(["GET", "HEAD", "POST"])
@may_provision
def review_step(request):
    draft = Draft(request.session)
    if draft.first_missing_step() != WizardStep.REVIEW:
        return redirect(STEP_URLS[draft.first_missing_step()])
    errors: dict[str, str] = {}
    plans: list[dict] = []
    # The acceptance survey that ends the job loads the servers; on a filesystem in use it
    # runs only when the operator says so.
    existing = (
        None
        if draft.new_filesystem
        else Filesystem.objects.filter(name=draft.filesystem_name).first()
    )
    warnings = usage_warnings(existing) if existing else []
    if request.method == "POST":
        skip = ""
        if warnings and request.POST.get("survey_anyway") != "1":
            skip = (
                f"{existing.name} was in use ({'; '.join(warnings)}); start one from the SSU's "
                "survey page when it is quiet"
            )
        # Confirm plans and checks once, as it saves; a refusal is shown as the preview's.
        try:
            job = start_provisioning(draft, request.user, skip_acceptance=skip)
        except SpecError as error:
            errors = error.errors
        else:
            messages.success(request, f"Provisioning started: job #{job.pk}.")
            return redirect("jobs:job-detail", pk=job.pk)
    else:
        try:
            plans = preview_plans(draft.specs())
        except SpecError as error:
            errors = error.errors
    sections = [
        {
            "plan": plan,
            "failover": failover_map(plan),
            "enclosures": enclosure_pictures(plan),
            "pacemaker": pacemaker_summary(plan),
        }
        for plan in plans
    ]
    return _render(
        request,
        "wizard/review.html",
        draft,
        WizardStep.REVIEW,
        {"sections": sections, "errors": errors, "survey_warnings": warnings},
    )


@require_safe
@may_provision
def download_spec(request, role: str):
    draft = Draft(request.session)
    spec = draft.mds_spec() if role == PairKind.MDS else draft.ssu_spec()
    if spec is None:
        return HttpResponseBadRequest(f"the wizard has no complete {role} spec yet")
    response = HttpResponse(json.dumps(spec, indent=2) + "\n", content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{spec["ssu"]}.json"'
    return response


@require_POST
@may_provision
def upload_spec(request):
    upload = request.FILES.get("spec")
    try:
        spec = json.loads(upload.read().decode()) if upload else None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        spec, problem = None, f"the file is not JSON: {error}"
    except RecursionError:
        spec, problem = None, "the file nests lists or objects too deeply to be a spec"
    else:
        problem = "choose a spec file" if upload is None else "a spec is a JSON object"
    if not isinstance(spec, dict):
        messages.error(request, f"Spec not loaded: {problem}.")
        return redirect("wizard:filesystem")
    refusals = spec_refusals(spec)
    if refusals:
        for field, message in refusals.items():
            messages.error(request, f"Spec not loaded: {field}: {message}.")
        return redirect("wizard:filesystem")
    draft = Draft(request.session)
    draft.load_spec(spec)
    draft.data["done"] = {}  # every step is shown again, filled in, and checked on its own
    if draft.filesystem_name:
        draft.mark_done(
            WizardStep.FILESYSTEM,
            draft.new_filesystem or Filesystem.objects.filter(name=draft.filesystem_name).exists(),
        )
    draft.save()
    messages.info(request, "Spec loaded. Enter the BMC passwords and check each step.")
    return redirect("wizard:servers")


@require_POST
@may_provision
def reset(request):
    Draft(request.session).clear()
    request.session.modified = True
    return redirect("wizard:filesystem")
