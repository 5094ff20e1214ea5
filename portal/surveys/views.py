"""The survey pages: start one for an SSU, an OSS or chosen OSTs; follow it; read its verdict,
table and load curves; an SSU's history side by side; two surveys compared."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from portal.console.services import Author
from portal.inventory.choices import PairKind
from portal.inventory.models import ServerPair
from portal.surveys import figures, services
from portal.surveys.choices import Verdict
from portal.surveys.forms import SurveyForm
from portal.surveys.models import Survey

PERMISSION = "surveys.add_survey"


@require_safe
def survey_list(request):
    surveys = Survey.objects.select_related("pair", "created_by", "job")[:200]
    pairs = ServerPair.objects.filter(kind=PairKind.OSS).order_by("name")
    return render(request, "surveys/list.html", {"surveys": surveys, "pairs": pairs})


@require_http_methods(["GET", "HEAD", "POST"])
def survey_new(request, name: str):
    pair = get_object_or_404(ServerPair.objects.select_related("filesystem"), name=name)
    if not request.user.has_perm(PERMISSION):
        raise PermissionDenied("starting a survey needs the operator role")
    warnings: list[str] = []
    if request.method == "POST":
        form = SurveyForm(request.POST, pair=pair)
        if form.is_valid():
            data = form.cleaned_data
            try:
                survey = services.start_survey(
                    pair,
                    scope=data["scope"],
                    server=data["server"] or None,
                    labels=data["targets"],
                    parameters={**data, "tolerance": data["tolerance"] / 100},
                    author=Author.of_request(request),
                    confirmed=data["confirm"],
                )
            except services.SurveyError as error:
                form.add_error(error.field if error.field in form.fields else None, str(error))
            except services.ConfirmationNeeded as needed:
                warnings = needed.warnings
            else:
                messages.info(request, f"Survey #{survey.pk} started (job #{survey.job_id}).")
                return redirect("surveys:detail", pk=survey.pk)
    else:
        initial = {}
        if request.GET.get("server"):
            initial = {"scope": "server", "server": request.GET["server"]}
        form = SurveyForm(pair=pair, initial=initial)
        warnings = services.usage_warnings(pair)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "surveys/new.html",
        {"pair": pair, "form": form, "warnings": warnings},
        status=status,
    )


def _detail_context(survey: Survey) -> dict:
    job = survey.job
    return {
        "survey": survey,
        "job": job,
        "running": survey.verdict == Verdict.PENDING and job is not None and not job.is_finished,
    }


@require_safe
def survey_detail(request, pk: int):
    survey = get_object_or_404(
        Survey.objects.select_related("pair__filesystem", "job", "created_by"), pk=pk
    )
    context = _detail_context(survey)
    if not context["running"]:
        servers = survey.servers
        context.update(
            curves=[_curve(survey, "", "All servers together")]
            + ([_curve(survey, host, host) for host in servers] if len(servers) > 1 else []),
            tables=[("All servers together", figures.table(survey))]
            + (
                [(host, figures.table(survey, host)) for host in servers]
                if len(servers) > 1
                else []
            ),
            alone=figures.alone(survey),
            others=Survey.objects.filter(pair=survey.pair).exclude(pk=survey.pk)[:20],
        )
    return render(request, "surveys/detail.html", context)


def _curve(survey: Survey, server: str, title: str) -> dict:
    key = server or "all"
    return {
        "key": key,
        "title": title,
        "data": figures.curve(survey, server),
        "id": f"curve-data-{key}",
    }


@require_safe
def survey_live(request, pk: int):
    """The running part of the survey page, polled by htmx; once the survey has finished the
    whole page is reloaded to draw the results."""
    survey = get_object_or_404(Survey.objects.select_related("job"), pk=pk)
    context = _detail_context(survey)
    if not context["running"]:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "surveys/_live.html", context)


@require_safe
def ssu_history(request, name: str):
    pair = get_object_or_404(ServerPair, name=name)
    surveys = list(
        Survey.objects.filter(pair=pair).select_related("created_by", "job").order_by("-created")
    )
    return render(
        request,
        "surveys/history.html",
        {"pair": pair, "surveys": surveys, "chart": figures.history_chart(surveys)},
    )


@require_safe
def survey_compare(request):
    try:
        first = Survey.objects.select_related("pair").get(pk=int(request.GET.get("a", "")))
        second = Survey.objects.select_related("pair").get(pk=int(request.GET.get("b", "")))
    except (ValueError, Survey.DoesNotExist):
        return render(
            request,
            "surveys/compare.html",
            {"error": "choose two surveys to compare: a and b must be survey numbers"},
            status=400,
        )
    return render(
        request,
        "surveys/compare.html",
        {"first": first, "second": second, "rows": figures.compare(first, second)},
    )
