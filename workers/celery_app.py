"""The Celery app of the workers (jobs, surveys, health, alerts).

Configuration comes from Django's settings (the ``CELERY_`` group): Redis as broker and result
backend, JSON only, time limits fit for long provisioning runs, the beat schedule.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("ostara")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The default for every thread, not only this one: shared tasks sent from a web server's
# worker threads must find this app, not Celery's unconfigured fallback (AMQP on localhost).
app.set_default()
