"""`manage.py provision SPEC.json ...`: the wizard's job, started from the command line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from portal.inventory.models import Server
from portal.inventory.provisioning import KIND
from portal.jobs.models import Job

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[3] / "deploy" / "demo-rack"


def test_the_demo_specs_are_saved_and_one_job_builds_both_pairs(
    tmp_path, django_capture_on_commit_callbacks
):
    secret = tmp_path / "bmc-password"
    secret.write_text("virtual\n")
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command(
            "provision",
            str(DEMO / "1-mds01.json"),
            str(DEMO / "2-ssu01.json"),
            "--bmc-password-file",
            str(secret),
            stdout=out,
        )
    job = Job.objects.get()
    assert out.getvalue().strip() == str(job.pk)
    assert len(callbacks) == 1  # queued for a worker, as the wizard's confirm does
    assert job.kind == KIND
    assert [p.name for p in job.pairs.order_by("kind", "name")] == ["mds01", "ssu01"]
    assert job.steps.count() == 10  # the playbooks, then the acceptance survey
    oss02 = Server.objects.get(hostname="oss02")
    assert (oss02.bmc_username, oss02.bmc_password) == ("root", "virtual")
    # The demo's servers have both Corosync links, on link-local addresses.
    assert (oss02.mgmt_address, oss02.heartbeat_address) == ("169.254.1.12", "169.254.2.12")


def test_a_refused_spec_saves_nothing_and_names_the_field(tmp_path):
    spec = json.loads((DEMO / "2-ssu01.json").read_text())
    spec["arrays"][0]["drives"] = 7
    path = tmp_path / "ssu01.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(CommandError, match=r"arrays\[0\]\.drives: 7 drives cannot"):
        call_command("provision", str(DEMO / "1-mds01.json"), str(path))
    assert not Job.objects.exists() and not Server.objects.exists()
