"""The Celery side of jobs: a thin shell around worker.run_job."""

from __future__ import annotations

from celery import shared_task

from portal.jobs.worker import run_job


@shared_task(name="jobs.run_job", acks_late=True)
def run_job_task(job_id: int) -> str | None:
    job = run_job(job_id)
    return job.state if job else None
