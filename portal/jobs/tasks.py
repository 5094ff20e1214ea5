"""The Celery side of jobs: thin shells around worker.run_job and services.sweep_jobs."""

from __future__ import annotations

import os

from celery import shared_task
from celery.signals import worker_ready

from portal.jobs.worker import run_job


@shared_task(name="jobs.run_job", acks_late=True, bind=True)
def run_job_task(self, job_id: int) -> str | None:
    job = run_job(job_id, worker=self.request.hostname or "", worker_pid=os.getpid())
    return job.state if job else None


@shared_task(name="jobs.sweep")
def sweep_jobs_task() -> dict[str, list[int]]:
    from portal.jobs.services import sweep_jobs

    return sweep_jobs()


@worker_ready.connect
def sweep_when_a_worker_starts(sender, **kwargs) -> None:
    """A worker that starts takes over from its dead namesake: its running jobs are orphans."""
    from portal.jobs.services import sweep_jobs

    sweep_jobs(restarted_worker=sender.hostname)
