from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from portal.jobs.models import Job, TransitionError
from portal.jobs.services import RetryRefused, request_cancel, retry, unsafe_to_retry


@require_safe
def job_list(request):
    jobs = Job.objects.select_related("created_by").prefetch_related("pairs")[:200]
    return render(request, "jobs/job_list.html", {"jobs": jobs})


def _context(job: Job) -> dict:
    unsafe = unsafe_to_retry(job) if job.is_finished else None
    return {"job": job, "steps": job.steps.all(), "unsafe_step": unsafe}


@require_safe
def job_detail(request, pk: int):
    job = get_object_or_404(Job.objects.select_related("created_by"), pk=pk)
    return render(request, "jobs/job_detail.html", _context(job))


@require_safe
def job_progress(request, pk: int):
    """The live part of the job page, polled by htmx until the job is finished."""
    job = get_object_or_404(Job, pk=pk)
    return render(request, "jobs/_progress.html", _context(job))


@require_POST
@permission_required("jobs.change_job", raise_exception=True)
def job_cancel(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    request_cancel(job)
    messages.info(request, f"Job #{job.pk}: cancel requested; it stops before its next step.")
    return redirect("jobs:job-detail", pk=job.pk)


@require_POST
@permission_required("jobs.change_job", raise_exception=True)
def job_retry(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    try:
        retry(job, checked=request.POST.get("checked") == "1")
    except TransitionError:
        messages.error(
            request,
            f"Job #{job.pk} is {job.get_state_display().lower()}; "
            "only a finished job can be run again.",
        )
    except RetryRefused as refused:
        messages.error(request, f"Job #{job.pk} not queued: {refused}.")
    else:
        messages.info(request, f"Job #{job.pk} queued again from its first unfinished step.")
    return redirect("jobs:job-detail", pk=job.pk)
