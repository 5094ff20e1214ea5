"""Any test, in any order, starts from the database as the migrations left it: the default
alert rules, content types and permissions are there after a transactional test (which ends by
emptying the database), and a test with serialized_rollback loads them without a clash.

With the suite spread over several processes, a process may run a transactional test before
tests that need those rows; here a pytest of its own runs them in that order on purpose."""

from __future__ import annotations

import os
import subprocess
import sys

from portal.conftest import REPO

TESTS = """
import pytest
from django.contrib.auth.models import Permission
from portal.alerts.models import Rule


@pytest.mark.django_db(transaction=True)
def test_1_transactional():
    assert Rule.objects.exists()
    Rule.objects.all().delete()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_2_serialized_rollback():
    assert Rule.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_3_transactional_again():
    assert Rule.objects.exists()


@pytest.mark.django_db
def test_4_in_a_transaction():
    assert Rule.objects.exists() and Permission.objects.exists()
"""

# pytest-django runs transactional tests last; this keeps the order written above.
IN_ORDER = """
import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.name)
"""


def test_tests_after_a_transactional_one_find_the_migrations_rows(tmp_path):
    (tmp_path / "in_order.py").write_text(IN_ORDER)
    (tmp_path / "test_order.py").write_text(TESTS)
    env = dict(
        os.environ,
        PYTHONPATH=f"{REPO}{os.pathsep}{tmp_path}",
        OSTARA_RUN_DIR=str(tmp_path / "run"),
        DJANGO_SETTINGS_MODULE="portal.tests.settings",
    )
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(tmp_path)]
        + ["-p", "portal.conftest", "-p", "in_order", "-p", "no:xdist", "-p", "no:cacheprovider"]
        + ["-q", str(tmp_path / "test_order.py")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout, done.stdout[-3000:]
