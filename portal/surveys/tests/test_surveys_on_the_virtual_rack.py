"""Surveys run for real: the survey job's playbook runs the virtual rack's obdfilter-survey on
both OSSs of the reference SSU, and its verdict follows the hardware: a healthy SSU passes, a
failed drive or a failed controller makes it fail with a reason that names what is slow."""

from __future__ import annotations

import pytest
from django.conf import settings

from portal import influxdb as influx
from portal.inventory.models import ServerPair, Target
from portal.jobs.choices import JobState
from portal.jobs.worker import run_job
from portal.surveys import services
from portal.surveys.choices import Verdict
from portal.surveys.models import Survey
from portal.surveys.tests.outcomes import ACCEPTED
from sensors import schema
from sensors.lineproto import line, series

pytestmark = [pytest.mark.django_db, pytest.mark.rack(seconds=120)]

QUICK = {"size_mb": 4096, "thr_lo": 4, "thr_hi": 16}


@pytest.fixture
def rack(virtual_rack, metrics_db, settings, tmp_path):
    virtual_rack.save_inventory()
    settings.VIRTUAL_RACK = virtual_rack.root
    settings.ANSIBLE_WORK_DIR = tmp_path / "ansible"
    return virtual_rack


def survey(**kwargs) -> Survey:
    pair = ServerPair.objects.get(name="ssu01")
    started = services.start_survey(
        pair, parameters={**QUICK, **kwargs.pop("parameters", {})}, **kwargs
    )
    run_job(started.job_id)
    started.refresh_from_db()
    started.job.refresh_from_db()
    return started


def test_healthy_failed_drive_and_failed_controller(rack):
    healthy = survey()
    assert healthy.verdict == Verdict.PASS, (healthy.reasons, healthy.job.error)
    assert healthy.job.state == JobState.SUCCEEDED
    assert ACCEPTED.match(healthy.job.outcome), healthy.job.outcome
    assert healthy.expected_mb_s == 9840.0
    assert 0.9 * 9840 <= healthy.measured_mb_s["write"] <= healthy.measured_mb_s["read"] <= 10_000
    results = healthy.results.all()
    # 4, 8, 16 threads per OST x 3 tests, on each server and added up; each OST alone.
    assert results.filter(server="oss01", target="").count() == 9
    assert results.filter(server="", target="").count() == 9
    assert sorted({r.thr for r in results.filter(server="", target="")}) == [96, 192, 384]
    assert results.exclude(target="").values("target").distinct().count() == 24
    top = results.get(server="", target="", thr=384, test="write")
    assert top.ost == 24 and top.mb_s == healthy.measured_mb_s["write"]
    assert top.min_mb_s < top.max_mb_s

    rack.inject("drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00")
    degraded = survey()
    assert degraded.verdict == Verdict.FAIL
    assert degraded.job.state == JobState.FAILED
    assert any(r.startswith("scratch-OST0000 alone: write reached") for r in degraded.reasons)
    assert not any("OST0002" in r for r in degraded.reasons), degraded.reasons
    assert "SSU ssu01 failed at" in degraded.job.outcome
    rack.clear_all()

    rack.inject("controller-failed", array="ssu01-a", controller="B")
    cacheless = survey(parameters={"per_target": False})
    assert cacheless.verdict == Verdict.FAIL
    # Both servers write to ssu01-a; each falls short on write, and read is unaffected.
    assert [r.split(":")[0] for r in cacheless.reasons] == ["oss01", "oss02"]
    assert all(" write reached " in r for r in cacheless.reasons), cacheless.reasons
    rack.clear_all()


def test_one_oss_and_chosen_osts(rack):
    one = survey(scope="server", server="oss02", parameters={"per_target": False})
    assert one.verdict == Verdict.PASS, one.reasons
    assert one.servers == ["oss02"] and len(one.labels) == 12
    assert one.expected_mb_s == 4920.0
    chosen = survey(scope="targets", labels=["scratch-OST0000", "scratch-OST0001"])
    assert chosen.targets == {"oss01": ["scratch-OST0000"], "oss02": ["scratch-OST0001"]}
    assert chosen.verdict == Verdict.PASS, chosen.reasons
    assert chosen.expected_mb_s == 820.0


def test_refusals_name_the_field_and_start_nothing(rack):
    pair = ServerPair.objects.get(name="ssu01")
    cases = [
        ({"parameters": {"thr_hi": 12}}, "thr_hi"),
        ({"parameters": {"thr_lo": 16, "thr_hi": 4}}, "thr_hi"),
        ({"parameters": {"obj_hi": 32}}, "obj_hi"),
        ({"parameters": {"tests": ["read"]}}, "tests"),
        ({"parameters": {"tests": ["write", "rewrite"]}}, "tests"),
        ({"parameters": {"tests": ["write", "rm -rf"]}}, "tests"),
        ({"parameters": {"rsz_hi_kib": 8192}}, "rsz_hi_kib"),
        ({"parameters": {"size_mb": "a lot"}}, "size_mb"),
        ({"scope": "server", "server": "oss07"}, "server"),
        ({"scope": "targets", "labels": ["scratch-MDT0000"]}, "targets"),
        ({"scope": "targets", "labels": ["x; reboot"]}, "targets"),
    ]
    for kwargs, field in cases:
        with pytest.raises(services.SurveyError) as refused:
            services.start_survey(pair, **kwargs)
        assert refused.value.field == field and field in str(refused.value)
    Target.objects.filter(label="scratch-OST0005").update(current_server=None)
    with pytest.raises(services.SurveyError, match="scratch-OST0005 is not mounted on any server"):
        services.start_survey(pair)
    with pytest.raises(services.SurveyError, match="MDS pair"):
        services.start_survey(ServerPair.objects.get(name="mds01"))
    assert not Survey.objects.exists()


def test_a_target_not_mounted_where_the_inventory_says_stops_at_the_check(rack):
    # The inventory still says oss01, the rack has it unmounted (someone did it by hand).
    from simulator import operations
    from simulator.rack import Rack

    with Rack.open(rack.root) as state:
        operations.umount_target(state.state, "oss01", "/mnt/lustre/scratch-OST0004")
        state.render()
    stopped = survey()
    assert stopped.job.state == JobState.FAILED
    assert stopped.verdict == Verdict.ERROR
    check = stopped.job.steps.get(name="check")
    assert "scratch-OST0004 is not mounted on oss01" in check.output
    assert not stopped.results.exists()


def test_clients_or_traffic_need_a_confirmation(rack):
    pair = ServerPair.objects.get(name="ssu01")
    now = int(__import__("time").time())
    tags = {schema.SERVER: "oss01", schema.FS: "scratch", schema.TARGET: "OST0000"}
    points = [
        line(
            series("ost", tags), {"num_exports": 34, "write_bytes": 0, "read_bytes": 0}, now - 120
        ),
        line(
            series("ost", tags),
            {"num_exports": 34, "write_bytes": 6_000_000_000, "read_bytes": 0},
            now - 60,
        ),
        line(
            series("ost", tags),
            {"num_exports": 34, "write_bytes": 12_000_000_000, "read_bytes": 0},
            now,
        ),
    ]
    influx.write_lines(points)
    with pytest.raises(services.ConfirmationNeeded) as needed:
        services.start_survey(pair, parameters=QUICK)
    warnings = needed.value.warnings
    assert warnings[0].startswith("32 clients are connected to scratch")
    assert warnings[1].startswith("scratch moved up to 95.4 MiB/s")
    assert not Survey.objects.exists()
    confirmed = services.start_survey(pair, parameters=QUICK, confirmed=True)
    assert confirmed.warnings == warnings
    assert settings.INFLUXDB_DATABASE  # the test's own database
