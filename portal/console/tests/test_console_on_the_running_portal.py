"""The console's reads and refusals on the running portal (the live server, real HTTP), as a
viewer's browser or script meets them: a parameter name that lctl would read as an option is
refused naming the field and runs nothing; reading a parameter answers at once with its job
while the playbook is still running on the servers, and the values once it is done; a user
past their rate hears 429 with Retry-After.

The rack does not run here: ``run_playbook`` answers for the servers, and a test says when (a
read held as long as the test likes), and the queue is the one thing replaced: the test runs
the jobs it was handed, as a worker would.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.core.cache import cache
from django.test import Client

from portal.console.choices import KIND_READ_PARAM
from portal.console.services import params
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.worker import run_job
from portal.web.throttling import UserRate
from provisioning.runner import PlaybookResult

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]

SERVERS = ["mds01", "mds02", "oss01", "oss02"]
RPCS = "osc.*.max_rpcs_in_flight"


class Rack:
    """Answers params.yml for the servers; ``hold`` keeps every run waiting until released."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def run_playbook(self, playbook, inventory, extravars=None, **_options):
        self.calls.append(extravars)
        self.started.set()
        assert self.release.wait(60), "the test never released the playbook"
        hosts = extravars["ostara_params"]["hosts"]
        facts = {
            host: {"param_output": f"osc.scratch-OST0000-osc-{host}.max_rpcs_in_flight=8"}
            for host in hosts
            if host.startswith("oss")
        }
        facts.update(
            {host: {"param_error": "no such parameter"} for host in hosts if host[:3] == "mds"}
        )
        return PlaybookResult(playbook, "successful", 0, facts=facts)


@pytest.fixture
def rack(monkeypatch):
    rack = Rack()
    monkeypatch.setattr(params, "run_playbook", rack.run_playbook)
    return rack


@pytest.fixture
def queue(monkeypatch):
    """The jobs handed to the queue (nothing reaches Redis: no stray job for other tests)."""
    handed: list[Job] = []
    monkeypatch.setattr(params, "enqueue", handed.append)
    return handed


def browser(live_server, role: str) -> requests.Session:
    """A signed-in browser of the role, on the running portal."""
    client = Client()
    assert client.login(username=role, password=f"pw-{role}-123!")
    session = requests.Session()
    session.cookies.set("sessionid", client.cookies["sessionid"].value)
    session.base = live_server.url
    return session


def get(session: requests.Session, path: str, **headers) -> requests.Response:
    return session.get(session.base + path, headers=headers, allow_redirects=False, timeout=10)


@pytest.fixture
def viewer(live_server, world, rack_inventory):
    return browser(live_server, "viewer")


def test_a_name_lctl_would_read_as_an_option_is_refused_and_nothing_runs(viewer, rack, queue):
    for name in ("-R.x", "--help.x"):  # lctl get_param -R (recursive), --help
        answer = get(viewer, f"/api/v1/console/parameters/?filesystem=scratch&name={name}")
        assert answer.status_code == 400, answer.text
        assert "starts with '-'" in answer.json()["name"][0]
        page = get(viewer, f"/console/parameters/?filesystem=scratch&name={name}")
        assert page.status_code == 400 and "starts with &#x27;-&#x27;" in page.text
    assert rack.calls == [] and queue == []
    assert not Job.objects.exists()


def test_a_read_answers_at_once_while_the_servers_are_read_then_shows_the_values(
    live_server, viewer, rack, queue
):
    rack.release.clear()  # every playbook waits until the test says
    operator = browser(live_server, "operator")
    names = [RPCS, "osc.*.max_dirty_mb", "ldlm.namespaces.*.lru_size", "mdt.*.identity_upcall"]
    # Four reads at once, from two users: each answers with its job, none waits for a server.
    with ThreadPoolExecutor(4) as pool:
        answers = list(
            pool.map(
                lambda pair: get(
                    pair[0], f"/api/v1/console/parameters/?filesystem=scratch&name={pair[1]}"
                ),
                zip([viewer, operator, viewer, operator], names, strict=True),
            )
        )
    assert [answer.status_code for answer in answers] == [202] * 4, [a.text for a in answers]
    first = answers[0].json()
    assert first["name"] == RPCS and first["state"] == JobState.PENDING
    assert first["poll"].endswith(f"/api/v1/console/parameters/?filesystem=scratch&name={RPCS}")
    assert sorted(job.pk for job in queue) == sorted(answer.json()["job"] for answer in answers)

    # A worker takes the first read; its playbook runs (held): the portal still answers, the
    # same read is not started twice, and the page shows it under way.
    worker = threading.Thread(target=run_job, args=(first["job"],))
    worker.start()
    try:
        assert rack.started.wait(10)
        again = get(viewer, f"/api/v1/console/parameters/?filesystem=scratch&name={RPCS}")
        assert again.status_code == 202 and again.json()["job"] == first["job"]
        assert again.json()["state"] == JobState.RUNNING
        page = get(viewer, f"/console/parameters/?filesystem=scratch&name={RPCS}")
        assert page.status_code == 200
        assert 'id="param-reading-progress"' in page.text and "hx-trigger" in page.text
        assert get(operator, "/jobs/").status_code == 200
        assert get(viewer, "/").status_code == 200
        assert Job.objects.filter(kind=KIND_READ_PARAM).count() == 4
    finally:
        rack.release.set()
        worker.join(30)

    # Done: the values, with their age, on the API, the page and the page's own refresh.
    done = get(viewer, f"/api/v1/console/parameters/?filesystem=scratch&name={RPCS}")
    assert done.status_code == 200, done.text
    reading = done.json()
    assert reading["state"] == JobState.SUCCEEDED and reading["job"] == first["job"]
    assert reading["values"] == {
        host: {f"osc.scratch-OST0000-osc-{host}.max_rpcs_in_flight": "8"}
        for host in ("oss01", "oss02")
    }
    assert reading["errors"] == {"mds01": "no such parameter", "mds02": "no such parameter"}
    assert 0 <= reading["age_seconds"] < 30 and reading["read"]
    refresh = get(
        viewer, f"/console/parameters/?filesystem=scratch&name={RPCS}", **{"HX-Request": "true"}
    )
    assert 'id="param-values"' in refresh.text and "hx-trigger" not in refresh.text
    assert "osc.scratch-OST0000-osc-oss02.max_rpcs_in_flight</td><td>8" in refresh.text
    assert len(rack.calls) == 1  # the other three reads wait for a worker; nothing ran twice


def test_a_user_past_their_rate_hears_429_with_retry_after(
    live_server, world, viewer, rack, queue, settings
):
    operator = browser(live_server, "operator")
    settings.OSTARA_PARAM_READS_PER_MINUTE = 2
    reads = [
        get(viewer, f"/api/v1/console/parameters/?filesystem=scratch&name={name}")
        for name in (RPCS, "osc.*.max_dirty_mb", "osc.*.checksums")
    ]
    assert [read.status_code for read in reads] == [202, 202, 429]
    assert int(reads[2].headers["Retry-After"]) >= 1
    assert "2 parameter reads a minute" in reads[2].json()["detail"]
    # The reads under way still answer (they start nothing), and the page says the same.
    assert (
        get(viewer, f"/api/v1/console/parameters/?filesystem=scratch&name={RPCS}").status_code
        == 202
    )
    page = get(viewer, "/console/parameters/?filesystem=scratch&name=osc.*.checksums")
    assert page.status_code == 429 and int(page.headers["Retry-After"]) >= 1
    assert "2 parameter reads a minute" in page.text
    assert len(queue) == 2

    # Every request: the API and the pages count together, per user.
    settings.OSTARA_THROTTLE_USER_RATE = "5/minute"
    for user in world.values():  # what earlier tests' users of the same id asked
        cache.delete(UserRate().cache_format % {"scope": "user", "ident": user.pk})
    answers = [get(viewer, "/api/v1/audit/") for _ in range(3)]
    answers += [get(viewer, "/jobs/") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200] * 5 + [429]
    assert int(answers[-1].headers["Retry-After"]) >= 1
    refused = get(viewer, "/api/v1/audit/")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert get(operator, "/api/v1/audit/").status_code == 200  # another user is not counted
