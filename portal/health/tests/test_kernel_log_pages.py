"""What the kernel said, from a server's kernel log to the pages: records in /dev/kmsg's format
read by the sensor's own reader (``sensors.kmsg``), written to the real test InfluxDB, shown on
the target and server pages next to the health reasons, and found by the kernel log search and
its API, filtered by server, target, message number and severity; a bad filter is named with
its reason; a storm is counted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from portal import influxdb as influx
from sensors.kmsg import KernelLog
from sensors.rounds import Round

pytestmark = [pytest.mark.services, pytest.mark.django_db]

BOOTED = int(time.time()) - 3600  # the servers booted an hour ago
# (server, seconds after boot, kmsg priority, message): as Lustre 2.15 logs them.
RECOVERY = [
    (
        "oss02",
        3000,
        4,
        "Lustre: scratch-OST0003: Will be in recovery for at least 5:00, or until 3 clients "
        "reconnect",
    ),
    (
        "oss02",
        3300,
        6,
        "Lustre: scratch-OST0003: Recovery over after 0:45, of 3 clients 3 recovered and 0 "
        "were evicted.",
    ),
    (
        "mds01",
        3400,
        3,
        "LustreError: 11-0: scratch-OST0003-osc-MDT0000: operation ost_statfs to node "
        "169.254.7.12@tcp failed: rc = -107",
    ),
    (
        "oss01",
        3500,
        3,
        "LustreError: 167-0: scratch-OST0005-osc-MDT0000: This client was evicted by "
        "scratch-OST0005; in progress operations using this service will fail.",
    ),
    ("oss01", 3550, 6, "Lustre: Lustre: Build Version: 2.15.4"),
    ("oss01", 3560, 6, "EXT4-fs (sda1): mounted filesystem with ordered data mode"),
]


def write_kernel_logs(tmp_path: Path, records, max_lines: int = 100) -> None:
    """Each server's records in its tree's dev/kmsg, read by the sensor's reader, written."""
    by_server: dict[str, list] = {}
    for server, after, priority, message in records:
        by_server.setdefault(server, []).append((after, priority, message))
    for server, lines in by_server.items():
        root = tmp_path / server
        (root / "dev").mkdir(parents=True, exist_ok=True)
        (root / "proc").mkdir(exist_ok=True)
        (root / "proc" / "stat").write_text(f"cpu  1 2 3 4\nbtime {BOOTED}\n")
        (root / "dev" / "kmsg").write_text(
            "".join(
                f"{priority},{sequence},{after * 1_000_000},-;{message}\n"
                for sequence, (after, priority, message) in enumerate(lines, start=1)
            )
        )
        rnd = Round(int(time.time()) * 1000, {"server": server})
        KernelLog(str(root), max_lines=max_lines).collect(rnd)
        assert not rnd.errors
        influx.write_lines(rnd.lines, precision="ms")


@pytest.fixture
def kernel_said(rack_inventory, metrics_db, tmp_path):
    write_kernel_logs(tmp_path, RECOVERY)


def page(client, world, path: str) -> str:
    client.force_login(world["viewer"])
    response = client.get(path)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def test_the_target_page_shows_the_lines_that_name_it_on_any_server(kernel_said, client, world):
    text = page(client, world, "/health/targets/scratch-OST0003/")
    section = text.split('id="kernel-lines"')[1].split("</section>")[0]
    rows = section.split("<tr data-server=")[1:]
    # Newest first: the MDS's failed statfs, then the recovery on oss02.
    assert [row.split('"')[1] for row in rows] == ["mds01", "oss02", "oss02"]
    assert "operation ost_statfs to node 169.254.7.12@tcp failed: rc = -107" in rows[0]
    assert ">11-0<" in rows[0] and ">err<" in rows[0]
    assert "Recovery over after 0:45" in rows[1]
    assert "scratch-OST0005" not in section
    assert 'href="/health/kernel-log/?target=scratch-OST0003"' in section


def test_the_server_page_shows_its_own_lustre_lines_only(kernel_said, client, world):
    text = page(client, world, "/health/servers/oss01/")
    section = text.split('id="kernel-lines"')[1].split("</section>")[0]
    assert "This client was evicted by scratch-OST0005" in section
    assert "Build Version: 2.15.4" in section
    assert "EXT4-fs" not in section  # not a Lustre line: never sent
    assert "Recovery over" not in section  # oss02's


def test_the_search_filters_by_message_number_and_severity(kernel_said, client, world):
    evicted = page(client, world, "/health/kernel-log/?message_number=167-0&window=24h")
    assert evicted.count("<tr data-server=") == 1 and "evicted by scratch-OST0005" in evicted
    errors = page(client, world, "/health/kernel-log/?severity=err")
    assert errors.count("<tr data-server=") == 2
    assert "Recovery over" not in errors
    everything = page(client, world, "/health/kernel-log/")
    assert everything.count("<tr data-server=") == 5
    # An hour back from 50 minutes ago: only the first recovery line.
    until = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(BOOTED + 3100))
    early = page(client, world, f"/health/kernel-log/?window=1h&until={until}")
    assert early.count("<tr data-server=") == 1 and "Will be in recovery" in early


def test_a_bad_filter_is_named_with_its_reason_on_the_page_and_in_the_api(
    kernel_said, client, world
):
    text = page(client, world, "/health/kernel-log/?target=OST0003;drop&message_number=x")
    assert "is not an OST or MDT name" in text
    assert "is not a Lustre message number" in text
    assert "<tr data-server=" not in text
    answer = client.get("/api/v1/kernel-log/?target=scratch-MGS&window=2h")
    assert answer.status_code == 400
    assert set(answer.json()) == {"target", "window"}
    assert "is not an OST or MDT name" in answer.json()["target"][0]


def test_the_api_gives_each_line_with_its_server_target_and_number(kernel_said, client, world):
    client.force_login(world["viewer"])
    answer = client.get("/api/v1/kernel-log/?server=mds01").json()
    (line,) = answer["lines"]
    assert line["server"] == "mds01" and line["target"] == "scratch-OST0003"
    assert (line["message_number"], line["severity"], line["subsystem"]) == (
        "11-0",
        "err",
        "lustre",
    )
    assert line["sequence"] == 1 and line["time"].startswith(
        time.strftime("%Y-%m-%dT%H:%M", time.gmtime(BOOTED + 3400))
    )
    assert answer["storms"] == []


def test_a_storm_is_counted_on_the_search_page(rack_inventory, metrics_db, tmp_path, client, world):
    storm = [
        (
            "oss02",
            3000 + n,
            3,
            f"LustreError: 11-0: scratch-OST0003-osc-MDT0000: operation ost_connect to node "
            f"169.254.7.{n % 200 + 1}@tcp failed: rc = -19",
        )
        for n in range(30)
    ]
    write_kernel_logs(tmp_path, storm, max_lines=10)
    text = page(client, world, "/health/kernel-log/?server=oss02")
    assert text.count("<tr data-server=") == 10
    storms = text.split('id="kernel-storms"')[1].split("</div>")[0]
    assert "<td>oss02</td><td>scratch-OST0003</td><td>11-0</td><td>err</td><td>20</td>" in storms


def test_with_influxdb_down_the_pages_say_the_lines_cannot_be_read(
    rack_inventory, metrics_db, client, world, settings
):
    answering = settings.INFLUXDB_URL
    settings.INFLUXDB_URL = "http://127.0.0.1:9"  # nothing listens there
    client.force_login(world["viewer"])
    target = client.get("/health/targets/scratch-OST0003/").content.decode()
    search = client.get("/health/kernel-log/").content.decode()
    api = client.get("/api/v1/kernel-log/")
    settings.INFLUXDB_URL = answering
    influx.ping()
    assert "The kernel lines cannot be read now: InfluxDB does not answer." in target
    assert "The kernel lines cannot be read now: InfluxDB does not answer." in search
    assert api.status_code == 503


def test_the_target_page_names_the_clients_it_evicted_or_that_reconnected(
    rack_inventory, metrics_db, tmp_path, client, world
):
    evicted = (
        "Lustre: scratch-OST0003: haven't heard from client 8f1e0a52-77d3-4b1c-a1f0-2d6c9e0b7a11 "
        "(at 169.254.7.20@tcp) in 227 seconds. I think it's dead, and I am evicting it. exp "
        "000000003f8a1b2c, cur 1764330000 expire 1764329850 last 1764329773"
    )
    reconnecting = (
        "Lustre: scratch-OST0003: Client 2b7c4d1e-1f0a-4c3b-9e8d-7a6b5c4d3e2f (at "
        "169.254.7.21@tcp) reconnecting"
    )
    lock_timeout = (  # ldlm_lockd.c's 138-a
        "LustreError: 138-a: scratch-OST0003: A client on nid 169.254.7.22@o2ib1 was evicted due "
        "to a lock blocking callback time out: rc -107"
    )
    write_kernel_logs(
        tmp_path,
        [
            ("oss01", 3000, 4, evicted),
            ("oss01", 3100, 4, reconnecting),
            ("oss01", 3200, 4, reconnecting),
            ("oss01", 3300, 4, reconnecting.replace("OST0003", "OST0005")),
            ("oss01", 3400, 3, lock_timeout),
        ],
    )
    text = page(client, world, "/health/targets/scratch-OST0003/")
    troubles = text.split('id="client-troubles"')[1].split("</table>")[0]
    rows = troubles.split("<tr data-client=")[1:]
    assert [row.split('"')[1] for row in rows] == [
        "169.254.7.20@tcp",
        "169.254.7.22@o2ib1",
        "169.254.7.21@tcp",
    ]
    assert "<td>1</td><td>0</td>" in rows[0] and "<td>1</td><td>0</td>" in rows[1]
    assert "<td>0</td><td>2</td>" in rows[2]
    assert 'id="client-troubles"' not in page(client, world, "/health/targets/scratch-OST0001/")
