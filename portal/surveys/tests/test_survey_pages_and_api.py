"""The survey pages, API and command on stored surveys: what a viewer reads (verdict, reasons,
curves, each OST alone, history, comparison) and what only an operator may start; refusals name
the field. The surveys here are concluded from printed output, as the job concludes them."""

from __future__ import annotations

import getpass
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from portal.console.choices import Act, Via
from portal.console.models import AuditEntry
from portal.health.choices import NodeKind, Status
from portal.health.models import HealthStatus
from portal.health.services.facts import object_key
from portal.inventory.models import ServerPair, Target
from portal.surveys import services
from portal.surveys.choices import ACCEPTANCE, Scope
from portal.surveys.models import Survey

pytestmark = pytest.mark.django_db

HEADER = "Mon Nov 23 10:00:00 UTC 2026 Obdfilter-survey for case=disk from {host}\n"


def line(ost: int, thr: int, write: float, read: float) -> str:
    return (
        f"ost {ost:2d} sz {ost * 4194304:8d}K rsz 1024K obj {ost:4d} thr {ost * thr:4d} "
        f"write {write:7.2f} [ 100.00,  500.00] read {read:7.2f} [ 120.00,  520.00] \n"
    )


def stored_survey(write_per_server: float, slow_ost: str | None = None) -> Survey:
    pair = ServerPair.objects.get(name="ssu01")
    by_server = services.targets_to_survey(pair, Scope.SSU)
    parameters = services.parameters_of({**ACCEPTANCE, "thr_lo": 4, "tests": ["write", "read"]})
    survey = services.new_survey(pair, Scope.SSU, by_server, parameters, None, [])
    outputs = {}
    for host in survey.servers:
        outputs[host] = (
            HEADER.format(host=host)
            + line(12, 4, write_per_server * 0.8, 4400)
            + line(12, 8, write_per_server * 0.95, 4600)
            + line(12, 16, write_per_server, 4700)
            + "done!\n"
        )
    alone = {
        label: HEADER.format(host="x") + line(1, 16, 240.0 if label == slow_ost else 390.0, 400)
        for label in survey.labels
    }
    survey.output = {"servers": outputs, "targets": alone}
    survey.save()
    return services.conclude(survey)


def test_pages_show_the_verdict_the_curves_history_and_comparison(rack_inventory, world, client):
    good = stored_survey(4700)
    bad = stored_survey(3900, slow_ost="scratch-OST0004")
    assert good.verdict == "pass" and bad.verdict == "fail"
    assert bad.reasons[:2] == [
        "oss01: write reached 3,900.0 MB/s on 12 OSTs at 192 threads, 79 % of the expected "
        "4,920.0 MB/s (at least 90 %, 4,428.0 MB/s, is required)",
        "oss02: write reached 3,900.0 MB/s on 12 OSTs at 192 threads, 79 % of the expected "
        "4,920.0 MB/s (at least 90 %, 4,428.0 MB/s, is required)",
    ]
    assert bad.reasons[2] == (
        "scratch-OST0004 alone: write reached 240.0 MB/s at 16 threads, 59 % of the expected "
        "410.0 MB/s per OST"
    )
    client.login(username="viewer", password="pw-viewer-123!")
    page = client.get(f"/surveys/{bad.pk}/").content.decode()
    assert 'data-verdict="fail"' in page and "scratch-OST0004 alone" in page
    assert 'data-chart="curve"' in page
    curve = json.loads(page.split('id="curve-data-all" type="application/json">')[1].split("<")[0])
    assert curve["x"] == [4, 8, 16] and curve["expected"] == 9840.0
    assert curve["series"]["write"] == [6240.0, 7410.0, 7800.0]
    assert 'class="slow" data-target="scratch-OST0004"' in page
    history = client.get("/surveys/ssu/ssu01/").content.decode()
    assert f"#{good.pk}" in history and f"#{bad.pk}" in history
    assert "Survey ssu01…" not in history  # a viewer starts nothing
    compared = client.get(f"/surveys/compare/?a={good.pk}&b={bad.pk}").content.decode()
    assert "-17.0 %" in compared  # write at 16 threads: 9,400 -> 7,800
    assert client.get("/surveys/compare/?a=x&b=1").status_code == 400
    assert client.get("/surveys/ssu/ssu01/new/").status_code == 403


def test_a_failing_verdict_names_the_array_and_the_part_health_found_failed(
    rack_inventory, world, client
):
    """The slow OSTs are on one array; the health engine found its controller failed: the
    verdict says so, after the servers and the OSTs it measured slow."""
    slow = Target.objects.get(label="scratch-OST0004").volume_group.array
    failed = "controller A has failed: controller B serves every volume"
    HealthStatus.objects.create(
        key=object_key(slow),
        kind=NodeKind.ARRAY,
        name=slow.name,
        status=Status.ORANGE,
        reasons=[failed],
        summary={"failed_parts": ["controller A"]},
        since=timezone.now(),
    )
    bad = stored_survey(3900, slow_ost="scratch-OST0004")
    assert bad.reasons[-1] == (
        f"The slow OST scratch-OST0004 is on array {slow.name}, where {failed}"
    )
    client.login(username="viewer", password="pw-viewer-123!")
    page = client.get(f"/surveys/{bad.pk}/").content.decode()
    assert f"is on array {slow.name}, where controller A has failed" in page

    # No OST slow alone: the OSTs of the slow servers, on each array health found wrong.
    servers_only = stored_survey(3900)
    held = Target.objects.filter(volume_group__array=slow).order_by("label")
    labels = [target.label for target in held]
    assert servers_only.reasons[-1] == (
        f"The OSTs {', '.join(labels[:3])} and {len(labels) - 3} more of oss01 and oss02 are "
        f"on array {slow.name}, where {failed}"
    )
    # Green again: nothing more than the measurements.
    HealthStatus.objects.filter(key=object_key(slow)).update(status=Status.GREEN, reasons=[])
    assert not any("on array" in r for r in stored_survey(3900, "scratch-OST0004").reasons)


def test_the_api_reads_everyone_and_starts_for_operators(rack_inventory, world, client, metrics_db):
    stored = stored_survey(4700)
    client.login(username="viewer", password="pw-viewer-123!")
    listed = client.get("/api/v1/surveys/?ssu=ssu01").json()
    assert [s["id"] for s in listed["results"]] == [stored.pk]
    assert listed["results"][0]["verdict"] == "pass"
    results = client.get(f"/api/v1/surveys/{stored.pk}/results/").json()
    totals = [r for r in results if not r["server"] and not r["target"]]
    assert {(r["thr"], r["test"]) for r in totals} >= {(384, "write"), (384, "read")}
    assert client.post("/api/v1/surveys/", {"ssu": "ssu01"}, "application/json").status_code == 403

    client.login(username="operator", password="pw-operator-123!")
    refused = client.post(
        "/api/v1/surveys/", {"ssu": "ssu01", "thr_hi": 3}, content_type="application/json"
    )
    assert refused.status_code == 400 and "thr_hi" in refused.json()
    unknown = client.post("/api/v1/surveys/", {"ssu": "nope"}, content_type="application/json")
    assert unknown.status_code == 400 and "ssu" in unknown.json()
    started = client.post(
        "/api/v1/surveys/",
        {"ssu": "ssu01", "scope": "server", "server": "oss02", "thr_lo": 8},
        content_type="application/json",
    )
    assert started.status_code == 201, started.json()
    body = started.json()
    assert list(body["targets"]) == ["oss02"] and body["verdict"] == "pending" and body["job"]
    assert Survey.objects.count() == 2
    entry = AuditEntry.objects.get(job=body["job"])
    assert (entry.username, entry.via, entry.act, entry.object_name) == (
        "operator",
        Via.API,
        Act.SURVEY,
        "ssu01",
    )
    assert entry.summary.startswith("obdfilter-survey of oss02\nOSTs: scratch-OST0001, ")


def test_the_form_refuses_with_the_field_named(rack_inventory, world, client, metrics_db):
    client.login(username="operator", password="pw-operator-123!")
    form = client.get("/surveys/ssu/ssu01/new/")
    assert form.status_code == 200 and "survey-warnings" not in form.content.decode()
    answer = client.post(
        "/surveys/ssu/ssu01/new/",
        {
            "scope": "server",
            "server": "",
            "size_mb": 1024,
            "rsz_lo_kib": 1024,
            "rsz_hi_kib": 1024,
            "thr_lo": 1,
            "thr_hi": 16,
            "obj_lo": 1,
            "obj_hi": 1,
            "tests": ["write", "read"],
            "tolerance": 90,
        },
    )
    assert answer.status_code == 400
    assert "server: choose oss01 or oss02" in answer.content.decode()
    assert not Survey.objects.exists()


def test_the_command_starts_and_shows(rack_inventory, world, metrics_db, capsys):
    with pytest.raises(CommandError, match="thr_hi: must be at least thr_lo"):
        call_command("survey", "ssu01", "--threads", "8", "4")
    with pytest.raises(CommandError, match="ssu: no SSU named 'ssu9'"):
        call_command("survey", "ssu9")
    call_command("survey", "ssu01", "--targets", "scratch-OST0001", "--size-mb", "2048")
    started = Survey.objects.get()
    assert started.targets == {"oss02": ["scratch-OST0001"]} and started.size_mb == 2048
    assert capsys.readouterr().out.strip() == str(started.pk)
    # In the audit log, with its author: the system account that ran the command, or --user.
    entry = AuditEntry.objects.get(job=started.job)
    assert (entry.act, entry.via, entry.object_name) == (Act.SURVEY, Via.COMMAND, "ssu01")
    assert entry.username == f"{getpass.getuser()} (system account)" and entry.user is None
    call_command("survey", "ssu01", "--server", "oss01", "--user", "operator")
    by_operator = Survey.objects.latest("pk")
    assert by_operator.created_by == world["operator"]
    entry = AuditEntry.objects.get(job=by_operator.job)
    assert (entry.username, entry.user) == ("operator", world["operator"])
    with pytest.raises(CommandError, match="user: no user named 'nobody'"):
        call_command("survey", "ssu01", "--user", "nobody")
    capsys.readouterr()
    stored = stored_survey(4700)
    call_command("survey", "--show", str(stored.pk))
    printed = capsys.readouterr().out
    assert printed.startswith(f"survey {stored.pk} of ssu01: pass")
    assert "SSU ssu01 accepted at 9.2 GiB/s (expected 9.6 GiB/s)" in printed
