"""The analytics report read from a real InfluxDB: the API, the pages, the window and its
refusals, and the offline report of the same points giving the same numbers."""

from __future__ import annotations

import io
import json
import time
from contextlib import redirect_stdout

import pytest

from portal import influxdb as influx
from portal.analytics import report as offline
from portal.analytics.tests.conftest import rounded
from sensors.lineproto import line, series

pytestmark = [pytest.mark.services, pytest.mark.django_db]
GIB = 2**30
ROUNDS = 31  # five minutes of sensor rounds, 10 s apart
HOT_CLIENT, CHATTY_CLIENT = "169.254.1.10@tcp", "169.254.1.11@tcp"


def rack_lines(start: int) -> list[str]:
    """One SSU for five minutes: oss01 (OST0000, OST0002) carries twice oss02's (OST0001,
    OST0003) bytes; job "hot.1" writes 64 MiB/s on OST0000 only; "wide.2" writes 16 MiB/s
    on each OST. OST fill 40-70 %. Per client: 169.254.1.10@tcp runs hot.1 and half of wide.2,
    169.254.1.11@tcp the other half and every read, in many small calls."""
    lines = []
    osts = {"OST0000": "oss01", "OST0001": "oss02", "OST0002": "oss01", "OST0003": "oss02"}
    for n in range(ROUNDS):
        t = start + 10 * n
        for number, (target, server) in enumerate(osts.items()):
            wide = 16 * 2**20 * 10 * n
            hot = 64 * 2**20 * 10 * n if target == "OST0000" else 0
            # oss02 also reads a little, so the two are not in a plain 2:1.
            read = 4 * 2**20 * 10 * n if server == "oss02" else 0
            tags = {"fs": "scratch", "target": target, "server": server}
            fields = {
                "read_bytes": read,
                "read_calls": n,
                "write_bytes": wide + hot,
                "write_calls": 10 * n,
                "kbytes_total": 1_000_000,
                "kbytes_free": 600_000 - 100_000 * number,
                "kbytes_avail": 600_000 - 100_000 * number,
            }
            lines.append(line(series("ost", tags), fields, t * 10**9))
            jobs = {"wide.2": wide, **({"hot.1": hot} if hot else {})}
            for jobid, written in jobs.items():
                job_fields = {
                    "read_bytes": 0,
                    "read_calls": 0,
                    "write_bytes": written,
                    "write_calls": n * 4,
                }
                lines.append(
                    line(series("ost_job", {**tags, "jobid": jobid}), job_fields, t * 10**9)
                )
            clients = {
                HOT_CLIENT: {"write_bytes": hot + wide // 2, "write_calls": n},
                CHATTY_CLIENT: {
                    "write_bytes": wide - wide // 2,
                    "write_calls": 9 * n,
                    "read_bytes": read,
                    "read_calls": n,
                },
            }
            for client, client_fields in clients.items():
                lines.append(
                    line(series("ost_client", {**tags, "client": client}), client_fields, t * 10**9)
                )
            for bucket, ios in (("4K", 3 * n), ("1M", 9 * n)):
                brw = {**tags, "section": "disk_io_size", "bucket": bucket}
                lines.append(line(series("brw", brw), {"read_ios": 0, "write_ios": ios}, t * 10**9))
    return lines


@pytest.fixture
def five_minutes(metrics_db):
    start = int(time.time()) - 10 * ROUNDS
    lines = rack_lines(start)
    influx.write_lines(lines, precision="n")
    return start, lines


def test_the_api_names_the_overloaded_oss_its_job_and_the_bad_striping(
    five_minutes, client, world, settings
):
    from portal.analytics.models import AnalyticsSettings

    row = AnalyticsSettings.load()
    row.striping_min_gib, row.striping_gib_per_stripe = 1, 1
    row.save()
    client.force_login(world["viewer"])
    body = client.get("/api/v1/analytics/report/?window=1h").json()
    shares = {row["server"]: row["share"] for row in body["oss"]}
    # oss01: 2 x 16 + 64 MiB/s = 96; oss02: 2 x 16 + 2 x 4 = 40; of 136.
    assert shares == pytest.approx({"oss01": 96 / 136, "oss02": 40 / 136})
    assert body["overloaded"] == ["oss01"]
    assert body["imbalance"]["max_over_mean"] == pytest.approx(96 / 68)
    detail = body["overloaded_detail"][0]
    assert detail["top_jobs"][0]["jobid"] == "hot.1"
    # The clients beside the jobs: hot.1's client moved 18.75 GiB + half of 4 x 4.6875 GiB.
    by_bytes = [(c["client"], c["bytes"]) for c in body["top_clients"]]
    assert by_bytes == [
        (HOT_CLIENT, pytest.approx(28.125 * GIB)),
        (CHATTY_CLIENT, pytest.approx(9.375 * GIB + 2 * 300 * 4 * 2**20)),
    ]
    assert [c["client"] for c in body["top_clients_by_ops"]] == [CHATTY_CLIENT, HOT_CLIENT]
    assert detail["osts"][0]["target"] == "scratch-OST0000"
    # hot.1 wrote 64 MiB/s x 300 s = 18.75 GiB on one OST: a stripe per GiB, bounded by 4 OSTs.
    flagged = {row["jobid"]: row for row in body["striping"]}
    assert set(flagged) == {"hot.1"}
    assert flagged["hot.1"]["osts"] == 1 and flagged["hot.1"]["stripe_count"] == 4
    assert "lfs setstripe -c 4" in flagged["hot.1"]["advice"]
    # Fill 40, 50, 60, 70 %: a 30-point spread, above qos_threshold_rr.
    assert body["ost_fill"]["spread_points"] == pytest.approx(30)
    assert body["ost_fill"]["flagged"] is True
    assert body["io_size"]["small_share"] == pytest.approx(0.25)
    assert body["request"]["policy"] == "raw"


def test_the_offline_report_of_the_same_points_gives_the_same_numbers(
    five_minutes, client, world, tmp_path
):
    start, lines = five_minutes
    client.force_login(world["viewer"])
    api = client.get(f"/api/v1/analytics/report/?since={start}&until={start + 10 * ROUNDS}").json()
    dump = tmp_path / "dump.lp"
    dump.write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    with redirect_stdout(out):
        assert offline.main([str(dump)]) == 0
    local = json.loads(out.getvalue())
    for key in ("oss", "imbalance", "overloaded", "striping", "io_size"):
        assert rounded(local[key], 9, ("ssu", "ssu_share")) == rounded(
            api[key], 9, ("ssu", "ssu_share")
        ), key
    assert local["ost_fill"]["spread_points"] == api["ost_fill"]["spread_points"]
    assert local["ost_fill"]["flagged"] == api["ost_fill"]["flagged"]


@pytest.mark.parametrize(
    "query, field",
    [
        ("window=2h", "window"),
        ("since=yesterday", "since"),
        ("since=2026-11-23T10:00:00Z&until=2026-11-23T09:00:00Z", "until"),
        ("until=2026-11-23T09:00:00Z", "since"),
        ("fs=nope", "fs"),
    ],
)
def test_a_bad_window_is_refused_naming_the_parameter(metrics_db, client, world, query, field):
    client.force_login(world["viewer"])
    response = client.get(f"/api/v1/analytics/report/?{query}")
    assert response.status_code == 400
    assert field in response.json()
    page = client.get(f"/analytics/load/?{query}")
    assert page.status_code == 400 and f"{field}:" in page.content.decode()


def test_the_pages_show_the_findings_and_keep_the_window_in_their_links(
    five_minutes, client, world
):
    client.force_login(world["viewer"])
    load = client.get("/analytics/load/?window=1h").content.decode()
    assert 'data-finding="overloaded"' in load and "hot.1" in load
    # OST0000: 80 MiB/s for 300 s, 23.4 GiB (Django's filesizeformat wrote "GB" for binary
    # units); hot.1's 64 MiB/s from its first point (290 s): 18.1 GiB in the striping table
    # and in its advice alike.
    assert "scratch-OST0000</a> (23.4 GiB: <code>hot.1</code>" in load and " GB" not in load
    striping = client.get("/analytics/striping/?window=1h").content.decode()
    assert "18.1 GiB</td>" in striping and "moved 18.1 GiB through 1 OST" in striping
    assert "/analytics/fill/?window=1h" in load  # the tabs keep the window
    cell = client.get(
        f"/analytics/cell/?by=server&name=oss01&start={five_minutes[0]}&end={five_minutes[0] + 300}"
    ).content.decode()
    assert "hot.1" in cell and "wide.2" in cell
    assert 'data-finding="fill"' in client.get("/analytics/fill/?window=1h").content.decode()
    access = client.get("/analytics/access/?window=1h").content.decode()
    assert "25 %" in access and "of I/Os below 64 KiB" in access
    assert "scratch-OST0003" in access  # the per-OST table
    clients = access.split('id="top-clients"')[1].split("</section>")[0]
    assert clients.index(HOT_CLIENT) < clients.index(CHATTY_CLIENT) and "28.1 GiB" in clients
    capacity = client.get("/analytics/capacity/?window=1h").content.decode()
    assert "scratch-OST0003" in capacity
    # A viewer reads the settings; only an administrator changes them.
    assert client.post("/analytics/settings/", {"overload_margin_percent": 10}).status_code == 403
