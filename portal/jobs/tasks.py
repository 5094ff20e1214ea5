"""The Celery side of jobs: thin shells around worker.run_job and services.sweep_jobs."""

from __future__ import annotations

import os

from celery import shared_task
from celery.signals import worker_ready

from portal.jobs.worker import run_job


# No result kept: the job's row is its result, and sending would otherwise also subscribe to
# the result in Redis, which fails past the send's own retries while Redis is down.
@shared_task(name="jobs.run_job", acks_late=True, bind=True, ignore_result=True)
def run_job_task(self, job_id: int) -> None:
    run_job(job_id, worker=self.request.hostname or "", worker_pid=os.getpid())


@shared_task(name="jobs.sweep", ignore_result=True)
def sweep_jobs_task() -> None:
    from portal.jobs.services import sweep_jobs

    sweep_jobs()


@worker_ready.connect
def sweep_when_a_worker_starts(sender, **kwargs) -> None:
    """A worker that starts (after a crash or a reboot) finds the jobs its predecessor left."""
    from portal.jobs.services import sweep_jobs

    sweep_jobs()
