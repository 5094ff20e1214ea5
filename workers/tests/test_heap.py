"""The long-lived processes freeze their start-up heap (``workers.heap``): a Celery pool process
once forked, a gunicorn worker once its views are loaded. Checked in fresh interpreters, through
the same signal and hook the real processes run."""

from __future__ import annotations

from deploy.tests.test_gunicorn_conf import run_in_django

WORKER = """
import gc, django
django.setup()
from celery.signals import worker_process_init
import workers.celery_app
before = gc.get_freeze_count()
worker_process_init.send(sender=None)
print(before, gc.get_freeze_count())
"""

PORTAL = """
import gc, runpy, django
django.setup()
before = gc.get_freeze_count()
runpy.run_path("deploy/gunicorn.conf.py")["post_worker_init"](None)
print(before, gc.get_freeze_count())
"""


def frozen(code: str, run_dir) -> tuple[int, int]:
    before, after = map(int, run_in_django(code, run_dir).split()[-2:])
    return before, after


def test_a_celery_pool_process_freezes_what_it_started_with(tmp_path):
    before, after = frozen(WORKER, tmp_path)
    assert before == 0
    assert after > 50_000  # Django, Celery, the apps' models and tasks


def test_a_portal_worker_freezes_what_it_loaded_with_its_views(tmp_path):
    before, after = frozen(PORTAL, tmp_path)
    assert before == 0
    assert after > 50_000
