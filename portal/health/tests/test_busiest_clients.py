"""The target and server pages list the clients that moved the most through them in the last
hour, from the per-export stats the sensor writes (``ost_client``), summed over a target that
failed over between its servers and not fooled by a counter that went back at a remount; an
MDT's and an MDS's list their clients by metadata operations (``mdt_client``)."""

from __future__ import annotations

import re
import time

import pytest

from portal import influxdb as influx
from sensors.lineproto import line, series

pytestmark = [pytest.mark.services, pytest.mark.django_db]
MIB = 2**20


def write_exports(rows) -> None:
    """rows: (seconds ago, server, target, client, read bytes, written bytes, calls)."""
    now = int(time.time())
    influx.write_lines(
        [
            line(
                series(
                    "ost_client",
                    {"fs": "scratch", "target": target, "server": server, "client": client},
                ),
                {"read_bytes": read, "write_bytes": written, "read_calls": 0, "write_calls": calls},
                (now - ago) * 10**9,
            )
            for ago, server, target, client, read, written, calls in rows
        ],
        precision="n",
    )


@pytest.fixture
def exports(rack_inventory, metrics_db):
    write_exports(
        [
            # 169.254.7.20@tcp writes 300 MiB on OST0003 through oss02, then 100 MiB on oss01
            # after a failover (a new series whose counters start again).
            (600, "oss02", "OST0003", "169.254.7.20@tcp", 0, 0, 0),
            (300, "oss02", "OST0003", "169.254.7.20@tcp", 0, 300 * MIB, 300),
            (200, "oss01", "OST0003", "169.254.7.20@tcp", 0, 0, 0),
            (100, "oss01", "OST0003", "169.254.7.20@tcp", 0, 100 * MIB, 100),
            # 169.254.7.21@tcp reads 50 MiB; its counters went back once (a remount): +50.
            (600, "oss02", "OST0003", "169.254.7.21@tcp", 10 * MIB, 0, 10),
            (300, "oss02", "OST0003", "169.254.7.21@tcp", 40 * MIB, 0, 40),
            (200, "oss02", "OST0003", "169.254.7.21@tcp", 0, 0, 0),
            (100, "oss02", "OST0003", "169.254.7.21@tcp", 20 * MIB, 0, 20),
            # Another OST of oss01, and an export two hours old.
            (300, "oss01", "OST0002", "169.254.7.22@tcp", 0, 0, 0),
            (100, "oss01", "OST0002", "169.254.7.22@tcp", 0, 5 * MIB, 5),
            (7300, "oss01", "OST0002", "169.254.7.23@tcp", 0, 0, 0),
            (7200, "oss01", "OST0002", "169.254.7.23@tcp", 0, 900 * MIB, 9),
        ]
    )


def clients_section(client, world, path: str) -> str:
    """The busiest clients as the page shows them: it asks for them once it is shown."""
    client.force_login(world["viewer"])
    page = client.get(path).content.decode()
    later = page.split('id="busiest-clients"')[1].split("</section>")[0]
    assert "Reading the last hour" in later
    text = client.get(re.search(r'hx-get="([^"]+)"', later)[1]).content.decode()
    return text.split('id="busiest-clients"')[1].split("</section>")[0]


def rows_of(client, world, path: str) -> list[str]:
    return clients_section(client, world, path).split("<tr data-client=")[1:]


def test_the_target_page_lists_its_busiest_clients(exports, client, world):
    rows = rows_of(client, world, "/health/targets/scratch-OST0003/")
    assert [row.split('"')[1] for row in rows] == ["169.254.7.20@tcp", "169.254.7.21@tcp"]
    assert ">400 MiB<" in rows[0] and ">400<" in rows[0]
    assert ">50 MiB<" in rows[1]


def test_the_server_page_lists_the_clients_of_the_targets_it_served(exports, client, world):
    rows = rows_of(client, world, "/health/servers/oss01/")
    assert [row.split('"')[1] for row in rows] == ["169.254.7.20@tcp", "169.254.7.22@tcp"]
    assert ">100 MiB<" in rows[0] and ">5 MiB<" in rows[1]


def test_the_mdt_and_mds_pages_rank_their_clients_by_metadata_operations(
    rack_inventory, metrics_db, client, world
):
    now = int(time.time())

    def mdt(ago, client_nid, opens, getattrs, unlinks):
        # The fields of an MDT export's stats (sensors.lustre.counter_fields): a count per
        # operation and its time in microseconds, which is not an operation.
        fields = {
            "open": opens,
            "open_usecs": opens * 40,
            "getattr": getattrs,
            "getattr_usecs": getattrs * 9,
            "unlink": unlinks,
        }
        tags = {"fs": "scratch", "target": "MDT0000", "server": "mds01", "client": client_nid}
        return line(series("mdt_client", tags), fields, (now - ago) * 10**9)

    influx.write_lines(
        [
            # .30 makes 10 opens and 2,000 getattrs (a find), .31 5,000 unlinks (an rm -r).
            mdt(600, "169.254.7.30@tcp", 100, 1000, 0),
            mdt(100, "169.254.7.30@tcp", 110, 3000, 0),
            mdt(600, "169.254.7.31@tcp", 0, 0, 1000),
            mdt(100, "169.254.7.31@tcp", 0, 0, 6000),
            # Idle in the hour: not listed.
            mdt(600, "169.254.7.32@tcp", 5, 5, 5),
            mdt(100, "169.254.7.32@tcp", 5, 5, 5),
        ],
        precision="n",
    )
    for path in ("/health/targets/scratch-MDT0000/", "/health/servers/mds01/"):
        rows = rows_of(client, world, path)
        assert [row.split('"')[1] for row in rows] == ["169.254.7.31@tcp", "169.254.7.30@tcp"]
        assert ">5,000<" in rows[0] and ">2,010<" in rows[1], path
        assert "Metadata operations" in clients_section(client, world, path), path


def test_the_lists_say_when_influxdb_does_not_answer_and_404_an_unknown_name(
    exports, client, world, settings
):
    client.force_login(world["viewer"])
    answering = settings.INFLUXDB_URL
    settings.INFLUXDB_URL = "http://127.0.0.1:9"  # nothing listens there
    pages = [
        client.get(path).content.decode()
        for path in ("/health/servers/oss01/clients/", "/health/targets/scratch-OST0003/clients/")
    ]
    settings.INFLUXDB_URL = answering
    influx.ping()
    for text in pages:
        assert "The clients' figures cannot be read now: InfluxDB does not answer." in text
    assert client.get("/health/servers/oss99/clients/").status_code == 404
    assert client.get("/health/targets/scratch-OST0fff/clients/").status_code == 404


def test_a_target_with_no_client_stats_has_no_list_and_the_mgs_no_placeholder(
    exports, client, world
):
    client.force_login(world["viewer"])
    # OST0005 moved nothing in the hour: the fragment is empty and replaces the placeholder.
    assert 'id="busiest-clients"' in client.get("/health/targets/scratch-OST0005/").content.decode()
    fragment = client.get("/health/targets/scratch-OST0005/clients/").content.decode()
    assert fragment.strip() == ""
    assert 'id="busiest-clients"' not in client.get("/health/targets/scratch-MGS/").content.decode()
