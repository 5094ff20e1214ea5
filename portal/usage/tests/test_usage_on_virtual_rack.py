"""The usage by owner on a clustered virtual rack whose servers run the product's sensor agent,
seen through the pages, the API and the mail, as a site would see it:

- a job run as uid 5001, whom the site named "ada" (an uploaded `getent passwd` output), fills
  an OST: the OST's page names ada as the one whose data fills it;
- with a hard limit the administrator set with the rack's own `lfs setquota`, the usage API
  and page forecast the day ada reaches it, from the growth the job gives;
- the rule "an owner's growth reaches their limit within 7 days" mails once to a real SMTP
  server on loopback, however many rounds are evaluated; "above 80 % of their limit" stays
  silent (ada holds a sliver of hers);
- the client NID that runs ada's job moves the most bytes: the analytics report's top client.

One rack serves the four; the waits are on what the API shows, not on timers.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.test import override_settings

from portal import influxdb as influx
from portal.alerts.choices import ConditionKind
from portal.alerts.models import Event, Rule
from portal.alerts.services.outbox import deliver_due
from portal.analytics.tests.test_analytics_on_virtual_rack import REPO, report, written_past
from portal.health import tasks as health_tasks
from portal.health.tests.conftest import SENSOR_INTERVAL
from portal.health.tests.virtual_rack import host_env
from portal.usage import choices
from sensors import schema

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.rack(seconds=100)]

ADA = 5001
GETENT = "root:x:0:0:root:/root:/bin/bash\nada:x:5001:5001:Ada:/home/ada:/bin/bash\n"
RATE_MIB = 200  # ada's job writes this many MiB/s to one OST
OTHER_RATE_MIB = 60  # a site user's job beside it, from another client
HARD_TIB = 30  # ada's hard limit: about two days at her rate


def workload(rack, *args) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "workload", "--rack", str(rack.root), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def job(rack, *args) -> tuple[str, str]:
    """Start a job writing to one OST (nothing read); its OST and its client's NID."""
    said = workload(
        rack, "job", "--stripe-count", "1", "--size", "100T", "--read-fraction", "0", *args
    )
    found = re.search(r"striped over (\S+), as .* from (\S+)$", said.strip())
    assert found, said
    return found.group(1), found.group(2)


def lfs(rack, *argv: str) -> str:
    """`lfs` typed on the MDS, as the administrator does."""
    done = subprocess.run(
        ["lfs", *argv], capture_output=True, text=True, env=host_env(rack.root, "mds01"), timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def usage(client, since: float, until: float | None = None) -> dict:
    query = f"since={since:.0f}" + (f"&until={until:.0f}" if until else "")
    answer = client.get(f"/api/v1/usage/?{query}")
    assert answer.status_code == 200, answer.content
    return answer.json()


def ada_row(body: dict) -> dict | None:
    rows = [row for row in body["top"]["user"]["kbytes"] if row["id"] == str(ADA)]
    return rows[0] if rows else None


def refreshed(ost: str, count: int, seconds: float) -> list[float]:
    """When the sensor first saw each of the first ``count`` figures of ada's space on
    ``ost``.

    The rack brings a target's accounting up to date every 30 s (simulator.procfs,
    SLOW_SECONDS), not continuously as Lustre does: a growth read between any two points
    counts whole steps, and a window from one new figure to another gives the job's own rate.
    Her first figure is new too: it appeared when the target's accounting was next brought up
    to date after her job started."""
    fs, target = schema.split_label(ost)
    statement = (
        f"SELECT kbytes FROM {schema.OWNER_USAGE.name} WHERE fs = '{fs}' "
        f"AND target = '{target}' AND kind = 'user' AND id = '{ADA}'"
    )
    deadline = time.monotonic() + seconds
    while True:
        points = influx.query_tagged([statement], epoch="ms")[0]
        new = [
            now["time"] / 1000
            for before, now in zip([{}, *points], points, strict=False)
            if now["kbytes"] != before.get("kbytes")
        ]
        if len(new) >= count:
            return new[:count]
        assert time.monotonic() < deadline, f"{len(new)} figures of ada in {seconds:.0f} s"
        time.sleep(SENSOR_INTERVAL / 2)


def evaluation_round() -> None:
    """What beat runs every interval: colours, the alert round on them, and the outbox."""
    health_tasks.evaluate()
    deliver_due()


def section(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}".*?</section>', html, re.S)
    assert found, f"no #{element_id} in the page"
    return found.group(0)


@override_settings(OSTARA_ALERT_GROUP_WAIT=0)
def test_usage_by_owner_on_a_virtual_rack(
    virtual_rack, metrics_db, client, world, smtp, tmp_path, monkeypatch
):
    virtual_rack.save_inventory()
    # The site names its users: an administrator uploads its `getent passwd`.
    client.login(username="admin", password="pw-admin-123!")
    named = client.post("/usage/names/", {"kind": "user", "source": "upload", "text": GETENT})
    assert named.status_code == 302, named.content
    client.login(username="viewer", password="pw-viewer-123!")
    # Only the owner rules, mailing ops; each round reads the owners afresh (the rack's rounds
    # are seconds, not the minute a reading serves).
    Rule.objects.all().delete()
    monkeypatch.setattr(choices, "ALERT_REUSE_SECONDS", 0)
    above = Rule.objects.create(
        name="Owner near the limit",
        condition=ConditionKind.QUOTA,
        threshold=80,
        extra_addresses="ops@example.org",
    )
    soon = Rule.objects.create(
        name="Owner reaches the limit within a week",
        condition=ConditionKind.QUOTA_DAYS,
        threshold=7,
        extra_addresses="ops@example.org",
    )

    virtual_rack.start(settings.INFLUXDB_URL, metrics_db, tmp_path / "spool", scenario="idle")
    lfs(virtual_rack, "setquota", "-u", str(ADA), "-B", f"{HARD_TIB}T", "/mnt/scratch")
    ada_ost, ada_client = job(virtual_rack, "--uid", str(ADA), "--rate", f"{RATE_MIB}M")
    other_ost, other_client = job(virtual_rack, "--uid", "1002", "--rate", f"{OTHER_RATE_MIB}M")
    assert other_ost != ada_ost and other_client != ada_client
    since = time.time()

    # 2. The forecast over three of the accounting's steps: the day ada reaches her limit at
    # the growth the job gives.
    first, _, last = refreshed(ada_ost, 3, 100)
    body = usage(client, first, last + 1)
    row = ada_row(body)
    assert row and row["name"] == "ada", body
    rate = RATE_MIB * 1024  # KiB/s
    per_day = row["kbytes_per_day"]
    assert 0.85 < per_day / (rate * 86400) < 1.15, per_day
    assert row["kbytes_hard"] == HARD_TIB * 2**30
    until = body["window"]["until"]
    expected = until + (row["kbytes_hard"] - row["kbytes"]) / rate
    assert abs(row["kbytes_limit_at"] - expected) < 0.15 * (expected - until)
    assert row["kbytes_limit_at"] > time.time() + 86400  # days ahead, not a reading's error
    day = time.strftime("%Y-%m-%d", time.gmtime(row["kbytes_limit_at"]))
    page = client.get(f"/usage/?since={first:.0f}&until={last + 1:.0f}")
    assert page.status_code == 200
    table = section(page.content.decode(), "top-user-kbytes")
    ada_line = re.search(rf'<tr data-owner="user:{ADA}">.*?</tr>', table, re.S)
    assert ada_line, table
    assert "ada (5001)" in ada_line.group(0) and day in ada_line.group(0)

    # 1. The OST ada's job fills names her first; the other job's OST does not.
    target = client.get(f"/health/targets/{ada_ost}/")
    assert target.status_code == 200
    owners = section(target.content.decode(), "target-owners")
    first_user = re.search(r'data-owner="user:(\d+)">([^<]*)<', owners)
    assert first_user and first_user.group(1) == str(ADA), owners
    assert first_user.group(2).startswith("user ada (5001) ")
    other = section(client.get(f"/health/targets/{other_ost}/").content.decode(), "target-owners")
    assert re.search(r'data-owner="user:(\d+)"', other).group(1) == "1002"
    assert "user ada" not in other

    # 3. One mail for ada's limit, whatever the rounds; the percent rule stays silent.
    deadline = time.monotonic() + 6 * SENSOR_INTERVAL
    while not smtp.mailbox.messages and time.monotonic() < deadline:
        evaluation_round()
        time.sleep(SENSOR_INTERVAL / 2)
    for _ in range(3):
        time.sleep(SENSOR_INTERVAL / 2)
        evaluation_round()
    (mail,) = smtp.mailbox.messages
    assert "user ada (5001) on scratch" in smtp.mailbox.subjects()[0]
    text = mail.get_body(preferencelist=("plain",)).get_content()
    assert "reaches its space limit on " in text
    assert Event.objects.filter(rule=soon).count() == 1
    assert not Event.objects.filter(rule=above).exists()

    # 4. The client behind ada's job moved the most bytes.
    window_end = int(time.time())
    written_past(window_end)
    clients = report(client, int(since), window_end)["top_clients"]
    assert [c["client"] for c in clients[:2]] == [ada_client, other_client], clients
