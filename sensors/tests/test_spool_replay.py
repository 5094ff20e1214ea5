"""Nothing is lost: batches InfluxDB cannot take go to a bounded on-disk spool that survives a
restart and is replayed oldest first; a batch refused for good is logged and counted, never
spooled; a batch sent twice does not count twice."""

from __future__ import annotations

import contextlib
import gzip
import http.server
import os
import socket
import threading
import time

import pytest

from sensors.sender import ACCEPTED, FAILED, REJECTED, InfluxWriter, Sender, encode_batches
from sensors.spool import Spool, SpoolError
from sensors.tests.conftest import influx_query


def _lines(measurement: str, n: int, start_ms: int = 1_000) -> list[str]:
    return [f"{measurement},host=h{i % 3} v={i}i {start_ms + i}" for i in range(n)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _body(lines: list[str]) -> bytes:
    return gzip.compress(("\n".join(lines) + "\n").encode())


# --------------------------------------------------------------------------------------------
# the spool on disk


def test_spool_keeps_batches_in_order_across_a_restart(tmp_path):
    spool = Spool(str(tmp_path), max_bytes=10**6, max_batches=10)
    for n in (3, 5, 7):
        spool.push(_body(_lines("m", n)), n)
    spool.close()
    again = Spool(str(tmp_path), max_bytes=10**6, max_batches=10)
    assert len(again) == 3 and again.points == 15
    assert sorted(os.listdir(tmp_path)) == [
        ".lock",
        "000000000001-3.lp.gz",
        "000000000002-5.lp.gz",
        "000000000003-7.lp.gz",
    ]
    oldest = again.oldest()
    assert (oldest.sequence, oldest.points) == (1, 3)
    assert gzip.decompress(again.read(oldest)).decode().count("\n") == 3
    again.remove(oldest)
    again.push(_body(_lines("m", 1)), 1)
    assert [b.sequence for b in again._batches] == [2, 3, 4]  # numbering goes on


def test_full_spool_drops_the_oldest_batches_and_counts_their_points(tmp_path):
    spool = Spool(str(tmp_path), max_bytes=10**6, max_batches=3)
    dropped = [spool.push(_body(_lines("m", n)), n) for n in (10, 20, 30, 40, 50)]
    assert dropped == [0, 0, 0, 10, 20]
    assert [b.points for b in spool._batches] == [30, 40, 50]
    assert spool.dropped_points == 30
    spool.close()
    assert Spool(str(tmp_path), 10**6, 3).dropped_points == 30  # kept over a restart


def test_spool_is_bounded_by_bytes_too(tmp_path):
    body = os.urandom(4000)  # does not compress: 4000 bytes per batch
    spool = Spool(str(tmp_path), max_bytes=10_000, max_batches=100)
    for _ in range(5):
        spool.push(body, 1)
    assert len(spool) == 2 and spool.bytes == 8000
    assert spool.dropped_points == 3


def test_a_write_cut_short_by_a_crash_is_cleaned_up(tmp_path):
    (tmp_path / ".tmp-000000000009-5.lp.gz").write_bytes(b"half")
    spool = Spool(str(tmp_path), 10**6, 10)
    assert len(spool) == 0 and not (tmp_path / ".tmp-000000000009-5.lp.gz").exists()


def test_two_sensors_cannot_share_one_spool(tmp_path):
    first = Spool(str(tmp_path), 10**6, 10)
    with pytest.raises(SpoolError):
        Spool(str(tmp_path), 10**6, 10)
    first.close()
    Spool(str(tmp_path), 10**6, 10).close()


# --------------------------------------------------------------------------------------------
# the sender against the real InfluxDB


def _count(url: str, database: str, measurement: str = "m") -> int:
    series = influx_query(url, f'SELECT count("v") FROM "{measurement}"', database)
    return series[0]["values"][0][1] if series else 0


@pytest.mark.services
def test_influxdb_down_spools_then_replays_in_order_without_double_counting(
    tmp_path, influx_url, influx_db
):
    spool = Spool(str(tmp_path), 10**7, 100)
    down = Sender(InfluxWriter(f"http://127.0.0.1:{_free_port()}", influx_db, timeout=2), spool)
    down.send(_lines("m", 7, start_ms=1_000), replay_seconds=1)
    down.send(_lines("m", 5, start_ms=2_000), replay_seconds=1)
    assert (len(spool), spool.points) == (2, 12)

    up = Sender(InfluxWriter(influx_url, influx_db), spool, batch_size=4)
    up.send(_lines("m", 3, start_ms=3_000), replay_seconds=5)
    assert len(spool) == 0
    assert _count(influx_url, influx_db) == 15
    # sent again (a timeout after InfluxDB had written it): same points, same count
    again = InfluxWriter(influx_url, influx_db)
    for body, _ in encode_batches(_lines("m", 7, start_ms=1_000), 100):
        assert again.write(body).outcome == ACCEPTED
    assert _count(influx_url, influx_db) == 15
    assert up.sent_points == 15


@pytest.mark.services
def test_a_refused_batch_is_counted_and_never_spooled(tmp_path, influx_url, influx_db, caplog):
    spool = Spool(str(tmp_path), 10**7, 100)
    sender = Sender(InfluxWriter(influx_url, influx_db), spool)
    sender.send(["m v=1i 1000"])
    # a float where InfluxDB already holds integers: field type conflict, for ever
    sender.send(["m v=1.5 2000", "m v=2i 3000"])
    assert len(spool) == 0
    assert spool.rejected_points == 1  # `dropped=1`: the other point was written
    assert _count(influx_url, influx_db) == 2
    assert "refused 1 of 2 points for good" in caplog.text
    assert "field type conflict" in caplog.text
    sender.send(["m v=3i 4000"])
    assert _count(influx_url, influx_db) == 3


@pytest.mark.services
def test_outcomes_of_the_real_server(influx_url, influx_db):
    writer = InfluxWriter(influx_url, influx_db)
    assert writer.write(_body(["m v=1i 1"])).outcome == ACCEPTED
    refused = writer.write(_body(['m v="text" 2']))
    assert refused.outcome == REJECTED and refused.rejected_points == 1
    unparsable = writer.write(_body(["m v=1i 3", "not line protocol"]))
    assert unparsable.outcome == REJECTED and "unable to parse" in unparsable.message
    assert unparsable.rejected_points == 1
    missing = InfluxWriter(influx_url, influx_db + "_not_yet").write(_body(["m v=1i 1"]))
    assert missing.outcome == FAILED and "404" in missing.message  # created later: retry


@pytest.mark.services
def test_a_missing_database_is_transient(tmp_path, influx_url, influx_db):
    database = influx_db + "_later"
    spool = Spool(str(tmp_path), 10**7, 100)
    sender = Sender(InfluxWriter(influx_url, database), spool)
    sender.send(_lines("m", 4))
    assert spool.points == 4
    influx_query(influx_url, f'CREATE DATABASE "{database}"')
    try:
        sender.send(_lines("m", 2, start_ms=5_000))
        assert len(spool) == 0
        assert _count(influx_url, database) == 6
    finally:
        influx_query(influx_url, f'DROP DATABASE "{database}"')


# --------------------------------------------------------------------------------------------
# server trouble InfluxDB cannot be made to show on demand: a stub at the HTTP boundary


class _Stub(http.server.BaseHTTPRequestHandler):
    status = 500
    delay = 0.0
    received: list[bytes] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.delay)
        _Stub.received.append(gzip.decompress(body))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error":"engine: cache maximum memory size exceeded"}')

    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    # server_close waits for every request's thread: a request the client gave up on (a
    # timeout test) must not answer into the next test's list.
    daemon_threads = False


@contextlib.contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler]):
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def stub():
    _Stub.received = []
    with _serving(_Stub) as server:
        yield server, f"http://127.0.0.1:{server.server_address[1]}"


def test_server_errors_and_timeouts_are_transient(tmp_path, stub):
    server, url = stub
    _Stub.status, _Stub.delay = 500, 0.0
    result = InfluxWriter(url, "db").write(_body(["m v=1i 1"]))
    assert result.outcome == FAILED and "cache maximum memory" in result.message
    _Stub.status, _Stub.delay = 204, 1.5
    result = InfluxWriter(url, "db", timeout=0.3).write(_body(["m v=1i 1"]))
    assert result.outcome == FAILED


def test_replay_is_oldest_first_and_new_batches_queue_behind_a_backlog(tmp_path, stub):
    server, url = stub
    _Stub.status, _Stub.delay = 204, 0.0
    spool = Spool(str(tmp_path), 10**7, 100)
    for start in (1_000, 2_000, 3_000):
        spool.push(_body(_lines("m", 2, start_ms=start)), 2)
    sender = Sender(InfluxWriter(url, "db"), spool)
    sender.send(_lines("m", 2, start_ms=4_000), replay_seconds=0)  # no time to replay
    assert len(spool) == 4 and _Stub.received == []  # the new batch went behind the backlog
    sender.send(_lines("m", 2, start_ms=5_000), replay_seconds=10)
    firsts = [body.decode().split("\n")[0].rsplit(" ", 1)[1] for body in _Stub.received]
    assert firsts == ["1000", "2000", "3000", "4000", "5000"]
    assert len(spool) == 0 and sender.sent_points == 10


def test_the_request_is_gzip_line_protocol_with_ms_precision(stub):
    server, url = stub
    _Stub.status = 204
    captured = {}

    class Capture(_Stub):
        def do_POST(self):  # noqa: N802
            captured["path"] = self.path
            captured["encoding"] = self.headers["Content-Encoding"]
            super().do_POST()

    server.RequestHandlerClass = Capture
    writer = InfluxWriter(url, "ostara", retention_policy="raw", username="u", password="p")
    assert writer.write(_body(["m v=1i 1"])).outcome == ACCEPTED
    assert captured["path"] == "/write?db=ostara&precision=ms&rp=raw"
    assert captured["encoding"] == "gzip"
    assert _Stub.received == [b"m v=1i 1\n"]


def test_a_spool_that_cannot_be_written_drops_and_counts_the_batch(tmp_path, monkeypatch, caplog):
    spool = Spool(str(tmp_path), 10**7, 100)

    def disk_full(body, points):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spool, "push", disk_full)
    sender = Sender(InfluxWriter(f"http://127.0.0.1:{_free_port()}", "db", timeout=1), spool)
    sender.send(_lines("m", 6))
    assert spool.dropped_points == 6
    assert "cannot spool 6 points, dropped: [Errno 28] No space left on device" in caplog.text


# --------------------------------------------------------------------------------------------
# one kept-alive connection, as InfluxDB allows


class _KeepAlive(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps the connection open between requests
    close_after_each = False  # as a server whose idle timeout closed the connection
    peers: list[tuple[str, int]] = []
    received: list[bytes] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _KeepAlive.peers.append(self.client_address)
        _KeepAlive.received.append(gzip.decompress(body))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
        # Closed without a `Connection: close`: the client learns it at its next request.
        self.close_connection = self.close_after_each

    def log_message(self, *args):
        pass


@pytest.fixture
def keep_alive():
    _KeepAlive.peers, _KeepAlive.received, _KeepAlive.close_after_each = [], [], False
    with _serving(_KeepAlive) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


def test_the_batches_of_a_round_go_on_one_connection(tmp_path, keep_alive):
    spool = Spool(str(tmp_path), 10**7, 100)
    sender = Sender(InfluxWriter(keep_alive, "db"), spool, batch_size=2)
    sender.send(_lines("m", 5))
    sender.send(_lines("m", 3, start_ms=9_000))
    assert len(_KeepAlive.received) == 5 and sender.sent_points == 8
    assert len(set(_KeepAlive.peers)) == 1  # one TCP connection for all five batches
    assert sender.writer.connections == 1


def test_a_connection_the_server_closed_while_idle_costs_no_batch(tmp_path, keep_alive):
    _KeepAlive.close_after_each = True
    spool = Spool(str(tmp_path), 10**7, 100)
    sender = Sender(InfluxWriter(keep_alive, "db"), spool, batch_size=2)
    sender.send(_lines("m", 4))
    sender.send(_lines("m", 2, start_ms=9_000))
    assert len(spool) == 0 and sender.sent_points == 6  # sent again on a new connection
    assert len(_KeepAlive.received) == 3 and len(set(_KeepAlive.peers)) == 3
