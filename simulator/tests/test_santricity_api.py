"""The virtual arrays' SANtricity REST API, as a monitoring collector reads it: the real paths
and JSON shapes over HTTPS with each controller's own certificate (the one the rack pinned),
basic auth as the array's monitor account, one port per controller (a failed controller's
refuses connections, its partner answers for the array), the same state as SMcli prints, the
Major Event Log, the analysed statistics, and `inject array-slow`."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import shutil
import socket
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from provisioning.planner import make_plan
from sensors import parsers
from sensors.arrays import SMCLI_SCRIPT, components_from_smcli
from simulator import failures, provision, scenarios
from simulator.rack import Rack
from simulator.santricity import mel
from simulator.santricity.server import ArraysApi
from simulator.tests.conftest import MDS_SPEC, REPO
from simulator.topology import touch

SPARES_SPEC = REPO / "provisioning/tests/specs/me4084_ssu.json"
ARRAY = "ssu02-a"
SYSTEM = "/devmgr/v2/storage-systems/1"


@pytest.fixture(scope="module")
def _golden(tmp_path_factory):
    """An MDS pair and one SSU of two ME4084 arrays (8 groups of 8+2 and 4 hot spares each)."""
    root = tmp_path_factory.mktemp("santricity") / "rack"
    with Rack.open(root, create=True) as rack:
        provision.build(rack, make_plan(copy.deepcopy(MDS_SPEC)))
        provision.build(rack, make_plan(json.loads(SPARES_SPEC.read_text())))
    return root


@pytest.fixture
def rack(rack_dir, _golden):
    shutil.copytree(_golden, rack_dir, symlinks=True)
    with Rack.open(rack_dir) as opened:
        opened.install_commands()
        opened.state["rebuild_seconds"] = 100
    return rack_dir


@pytest.fixture
def api(rack):
    served = ArraysApi(rack)
    served.start()
    yield served
    served.stop()


def management(root: Path, array: str = ARRAY) -> dict:
    return json.loads((root / "rack.json").read_text())["arrays"][array]["management"]


def call(root, path, *, controller="A", array=ARRAY, password=None, method="GET"):
    """(HTTP status, JSON body) of one request, TLS verified against the pinned certificate."""
    record = management(root, array)
    secret = (root / record["password_file"]).read_text().strip() if password is None else password
    served = record["controllers"][controller]
    context = ssl.create_default_context(cafile=str(root / served["certificate"]))
    port = served["port"]
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}", method=method)
    token = base64.b64encode(f"{record['user']}:{secret}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    request.add_header("Accept", "application/json")
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def get(root, path, **kwargs):
    status, body = call(root, path, **kwargs)
    assert status == 200, (path, status)
    return body


def change(root, act, render=False):
    """One change to the rack (the API and SMcli read rack.json; the servers' files, only
    what `render` rewrites, are read by the array-slow test)."""
    with Rack.open(root) as opened:
        result = act(opened)
        if render:
            opened.render()
    return result


def eventually(check, seconds=5.0):
    """The server looks at the rack a few times a second."""
    deadline = time.time() + seconds
    while True:
        try:
            return check()
        except (AssertionError, OSError):
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def refused(root, controller, array=ARRAY) -> bool:
    port = management(root, array)["controllers"][controller]["port"]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def smcli_components(host_cmd, array=ARRAY) -> dict:
    result = host_cmd(None, "SMcli", "-n", array, "-S", "-c", SMCLI_SCRIPT)
    assert result.returncode == 0, result.stderr
    return {(c.component, c.id): c for c in components_from_smcli(array, result.stdout)}


def rest_components(root, controller="A", array=ARRAY) -> dict:
    """What a collector makes of the REST API: the same (component, id) keys as SMcli's."""
    inventory = get(root, f"{SYSTEM}/hardware-inventory", controller=controller, array=array)
    trays = {t["trayRef"]: t["trayId"] for t in inventory["trays"]}
    drawers = {d["drawerRef"]: d["physicalLocation"]["slot"] for d in inventory["drawers"]}
    found = {}
    words = {"removed": "missing"}
    for drive in get(root, f"{SYSTEM}/drives", controller=controller, array=array):
        where = drive["physicalLocation"]
        ident = "{},{},{}".format(
            trays[where["trayRef"]],
            drawers[where["locationParent"]["symbolRef"]],
            where["locationPosition"],
        )
        found[("drive", ident)] = words.get(drive["status"], drive["status"])
    for pool in get(root, f"{SYSTEM}/storage-pools", controller=controller, array=array):
        progress = get(
            root,
            f"{SYSTEM}/storage-pools/{pool['id']}/action-progress",
            controller=controller,
            array=array,
        )
        found[("volume_group", pool["name"])] = (
            pool["raidStatus"],
            progress[0]["currentAction"] if progress else None,
            progress[0]["progressPercentage"] if progress else None,
        )
    for ctrl in get(root, f"{SYSTEM}/controllers", controller=controller, array=array):
        found[("controller", ctrl["physicalLocation"]["label"])] = ctrl["status"]
    return found


def as_rest(smcli: dict) -> dict:
    """SMcli's words in the REST API's (a critical group is degraded there too, an Online
    controller is optimal)."""
    out = {}
    controllers = {"online": "optimal"}
    actions = {"reconstruction": "reconstructing", "copyback": "copyback"}
    for key, c in smcli.items():
        if key[0] == "volume_group":
            state = "degraded" if c.state == "critical" else c.state
            out[key] = (state, actions.get(c.operation), c.progress)
        elif key[0] == "controller":
            out[key] = controllers.get(c.state, c.state)
        else:
            out[key] = c.state
    return out


# -- shapes ------------------------------------------------------------------------------------


def test_the_api_answers_in_the_real_shapes(api, rack):
    about = get(rack, "/devmgr/utils/about", controller="B")
    assert about == {
        "runningAsProxy": False,
        "version": about["version"],
        "systemId": "1",
        "controllerPosition": 2,
    }
    [system] = get(rack, "/devmgr/v2/storage-systems")
    assert (system["id"], system["name"], system["status"]) == ("1", ARRAY, "optimal")
    assert system["wwn"] == management(rack)["wwn"] and system["hotSpareCount"] == 4
    # The WWN names the system as well as "1" does.
    assert get(rack, f"/devmgr/v2/storage-systems/{system['wwn']}/controllers")

    drives = get(rack, f"{SYSTEM}/drives")
    assert len(drives) == system["driveCount"] == 84
    spares = [d for d in drives if d["hotSpare"]]
    assert len(spares) == 4
    assert {d["sparedForDriveRef"] for d in spares} == {"0" * 40}
    member = next(d for d in drives if not d["hotSpare"])
    assert member["status"] == "optimal" and isinstance(member["rawCapacity"], str)
    assert int(member["rawCapacity"]) == 8 * 10**12
    assert set(member["physicalLocation"]) >= {"trayRef", "slot", "locationParent", "label"}

    pools = get(rack, f"{SYSTEM}/storage-pools")
    assert [p["name"] for p in pools] == [f"{ARRAY}-vg{i:02d}" for i in range(8)]
    assert {(p["raidLevel"], p["raidStatus"], p["state"]) for p in pools} == {
        ("raid6", "optimal", "complete")
    }
    assert {d["currentVolumeGroupRef"] for d in drives if not d["hotSpare"]} == {
        p["id"] for p in pools
    }
    volumes = get(rack, f"{SYSTEM}/volumes")
    assert {v["volumeGroupRef"] for v in volumes} == {p["id"] for p in pools}
    assert {(v["status"], v["action"]) for v in volumes} == {("optimal", "none")}
    controllers = get(rack, f"{SYSTEM}/controllers")
    assert [(c["physicalLocation"]["label"], c["status"]) for c in controllers] == [
        ("A", "optimal"),
        ("B", "optimal"),
    ]
    assert {v["currentManager"] for v in volumes} <= {c["controllerRef"] for c in controllers}
    assert get(rack, f"{SYSTEM}/failures") == [] and get(rack, f"{SYSTEM}/mel-events") == []
    for kind, key in (
        ("volume", "volumeId"),
        ("drive", "diskId"),
        ("controller", "controllerId"),
        ("interface", "interfaceId"),
    ):
        rows = get(rack, f"{SYSTEM}/analysed-{kind}-statistics")
        assert rows and all(key in row for row in rows)
        assert {
            "readIOps",
            "writeIOps",
            "readThroughput",
            "writeThroughput",
            "readResponseTime",
            "writeResponseTime",
            "observedTime",
        } <= set(rows[0])
    # As on real arrays, a host interface's statistics name it by its ref alone; whose port it
    # is comes from the controllers' host interfaces.
    interfaces = get(rack, f"{SYSTEM}/analysed-interface-statistics")
    assert not any("controllerId" in row for row in interfaces)
    ports = {
        port["sas"]["interfaceRef"]: (c["physicalLocation"]["label"], port["sas"]["channel"])
        for c in controllers
        for port in c["hostInterfaces"]
    }
    assert {row["interfaceId"] for row in interfaces} <= set(ports)
    assert sorted(ports.values()) == [("A", 1), ("A", 2), ("B", 1), ("B", 2)]
    assert call(rack, f"{SYSTEM}/nothing-here")[0] == 404
    assert call(rack, "/devmgr/v2/storage-systems/2/drives")[0] == 404


def test_a_wrong_password_gets_401(api, rack):
    assert call(rack, f"{SYSTEM}/drives", password="not-the-password") == (401, None)
    assert call(rack, f"{SYSTEM}/drives", password="")[0] == 401
    assert call(rack, f"{SYSTEM}/drives")[0] == 200
    # The password is the array's own, readable by its owner only.
    record = management(rack)
    assert (rack / record["password_file"]).stat().st_mode & 0o777 == 0o600
    # Another array has another password: this one's is refused there.
    other = management(rack, "ssu02-b")
    mine = (rack / record["password_file"]).read_text().strip()
    assert (rack / other["password_file"]).read_text().strip() != mine
    assert call(rack, f"{SYSTEM}/drives", array="ssu02-b", password=mine)[0] == 401
    assert call(rack, f"{SYSTEM}/drives", array="ssu02-b")[0] == 200


def test_each_controller_serves_its_own_certificate_as_recorded(api, rack):
    record = management(rack)
    for controller in ("A", "B"):
        port = record["controllers"][controller]["port"]
        served = ssl.get_server_certificate(("127.0.0.1", port))
        recorded = record["controllers"][controller]["sha256"]
        assert hashlib.sha256(ssl.PEM_cert_to_DER_cert(served)).hexdigest() == recorded
        assert len(recorded) == 64
    # Controllers A and B have different certificates, as real E-series controllers do.
    a, b = (record["controllers"][c]["sha256"] for c in ("A", "B"))
    assert a != b
    # Controller B's certificate does not verify controller A.
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(
            f"https://127.0.0.1:{record['controllers']['A']['port']}/devmgr/utils/about",
            context=ssl.create_default_context(
                cafile=str(rack / record["controllers"]["B"]["certificate"])
            ),
            timeout=10,
        )
    # Another array has its own certificates.
    other = management(rack, "ssu02-b")["controllers"]
    assert {other["A"]["sha256"], other["B"]["sha256"]}.isdisjoint({a, b})
    port = record["controllers"]["B"]["port"]
    # A client that pins nothing and trusts no CA refuses the self-signed certificate.
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(
            f"https://127.0.0.1:{port}/devmgr/utils/about",
            context=ssl.create_default_context(),
            timeout=10,
        )


# -- one model, two interfaces --------------------------------------------------------------


def test_a_failed_drive_and_its_reconstruction_read_the_same_as_smcli(api, rack, host_cmd):
    assert rest_components(rack) == as_rest(smcli_components(host_cmd))
    group = f"{ARRAY}-vg00"
    [failed] = change(
        rack, lambda r: failures.inject(r, "drive-failed", array=ARRAY, volume_group=group)
    )["drives"]
    change(rack, lambda r: r.advance(by=37))
    read = rest_components(rack)
    assert read == as_rest(smcli_components(host_cmd))
    key = ",".join(map(str, failed))
    assert read[("drive", key)] == "failed"
    assert read[("volume_group", group)] == ("degraded", "reconstructing", 37)
    # The spare that took the drive's place names it.
    drives = get(rack, f"{SYSTEM}/drives")
    failed_ref = next(d["id"] for d in drives if d["status"] == "failed")
    in_use = [d for d in drives if d["hotSpare"] and d["sparedForDriveRef"] != "0" * 40]
    assert [d["sparedForDriveRef"] for d in in_use] == [failed_ref]
    assert get(rack, SYSTEM.rsplit("/", 1)[0])[0]["status"] == "needsAttn"
    assert {f["failureType"] for f in get(rack, f"{SYSTEM}/failures")} == {
        "failedDrive",
        "hotSpareInUse",
        "degradedVolumeGroup",
    }
    longlived = get(rack, f"{SYSTEM}/symbol/getLongLivedOpsProgress", method="POST")
    assert longlived["longLivedOpsProgress"][0]["reconstruct"]["groupPercentComplete"] == 37

    # Two more: the group loses all its redundancy, then fails; the two views still agree.
    change(rack, lambda r: failures.inject(r, "drive-failed", array=ARRAY, volume_group=group))
    assert rest_components(rack) == as_rest(smcli_components(host_cmd))
    change(rack, lambda r: failures.inject(r, "drive-failed", array=ARRAY, volume_group=group))
    read = rest_components(rack)
    assert read == as_rest(smcli_components(host_cmd))
    assert read[("volume_group", group)][0] == "failed"


def test_a_failed_controller_does_not_answer_and_its_partner_does(api, rack, host_cmd):
    assert not refused(rack, "A")
    failure = change(
        rack, lambda r: failures.inject(r, "controller-failed", array=ARRAY, controller="A")
    )
    eventually(lambda: _assert(refused(rack, "A")))
    read = rest_components(rack, controller="B")
    assert read[("controller", "A")] == "failed"
    assert read == as_rest(smcli_components(host_cmd))
    # Every volume is served by B now.
    assert {v["currentManager"] for v in get(rack, f"{SYSTEM}/volumes", controller="B")} == {
        "070000000000000000000002"
    }
    # The other array's controllers are untouched.
    assert not refused(rack, "A", array="ssu02-b")
    change(rack, lambda r: failures.clear(r, failure["id"]))
    eventually(lambda: _assert(not refused(rack, "A")))
    assert get(rack, f"{SYSTEM}/controllers", controller="A")[0]["status"] == "optimal"


def test_a_pulled_drawer_reads_the_same_as_smcli(api, rack, host_cmd):
    change(rack, lambda r: failures.inject(r, "drawer-failed", array=ARRAY, enclosure=0, drawer=2))
    read = rest_components(rack)
    assert read == as_rest(smcli_components(host_cmd))
    assert "missing" in {state for (kind, _id), state in read.items() if kind == "drive"}
    # This layout puts half of each group in each of its two drawers: all groups are lost.
    pools = get(rack, f"{SYSTEM}/storage-pools")
    assert {(p["raidStatus"], p["state"], p["offline"]) for p in pools} == {
        ("failed", "incomplete", True)
    }
    assert [e["eventType"] for e in events(rack)][:1] == [0x2862]


def _assert(condition: bool) -> bool:
    assert condition
    return condition


# -- the MEL ------------------------------------------------------------------------------


def events(root, start=None, count=None, controller="A"):
    query = []
    if start is not None:
        query.append(f"startSequenceNumber={start}")
    if count is not None:
        query.append(f"count={count}")
    suffix = "?" + "&".join(query) if query else ""
    return get(root, f"{SYSTEM}/mel-events{suffix}", controller=controller)


def test_the_arrays_log_their_failures_in_the_mel(api, rack, host_cmd):
    group = f"{ARRAY}-vg01"
    [failed] = change(
        rack, lambda r: failures.inject(r, "drive-failed", array=ARRAY, volume_group=group)
    )["drives"]
    address = ",".join(map(str, failed))
    first = events(rack)
    assert [(e["eventType"], e["componentType"]) for e in first] == [
        (0x226C, "drive"),
        (0x2273, "drive"),
        (0x2280, "volumeGrp"),
        (0x2049, "volumeGrp"),
    ]
    assert [int(e["sequenceNumber"]) for e in first] == [1, 2, 3, 4]
    drive_event = first[0]
    assert drive_event["critical"] and drive_event["priority"] == "priorityCritical"
    assert drive_event["location"] == "Tray {}, Drawer {}, Slot {}".format(*failed)
    tray_slots = {
        d["id"]: (d["physicalLocation"]["slot"], d["status"]) for d in get(rack, f"{SYSTEM}/drives")
    }
    assert (drive_event["componentLocation"]["driveLoc"]["slot"], "failed") in tray_slots.values()
    assert first[2]["componentLocation"]["label"] == group
    assert int(first[0]["timeStamp"]) == int(json.loads((rack / "rack.json").read_text())["clock"])

    change(rack, lambda r: r.advance(by=150))  # the reconstruction (100 s) completes
    change(rack, lambda r: failures.replace_drive(r, ARRAY, address))  # copyback starts
    change(rack, lambda r: r.advance(by=150))
    change(rack, lambda r: failures.inject(r, "controller-failed", array=ARRAY, controller="B"))
    later = events(rack, start=5, controller="A")
    assert [(e["eventType"], e["description"]) for e in later] == [
        (0x204A, "Reconstruction completed"),
        (0x100A, "Drive inserted"),
        (0x204B, "Copyback started"),
        (0x204C, "Copyback completed"),
        (0x5005, "Controller failed"),
    ]
    assert later[-1]["componentLocation"]["controllerLoc"]["slot"] == 2
    assert [e["sequenceNumber"] for e in events(rack, start=6, count=2)] == ["6", "7"]
    # Only the critical ones, as the API's `critical` filter gives them.
    critical = get(rack, f"{SYSTEM}/mel-events?critical=true")
    assert {e["eventType"] for e in critical} == {0x226C, 0x2273, 0x2280, 0x5005}
    # The other array logged nothing.
    assert get(rack, f"{SYSTEM}/mel-events", array="ssu02-b") == []


def test_the_mel_is_bounded_and_its_numbers_only_grow(rack, monkeypatch):
    monkeypatch.setattr(mel, "CAPACITY", 3)
    with Rack.open(rack) as opened:
        array = opened.state["arrays"][ARRAY]
        for step in range(6):  # controller A fails and comes back, three times
            array["controllers"]["A"] = "failed" if step % 2 == 0 else "optimal"
            touch(array)
            mel.observe(opened.state, opened.now + step)
        kept = mel.events(array)
    assert [e[0] for e in kept] == [4, 5, 6]
    assert [e[2] for e in kept] == [
        mel.CONTROLLER_OPTIMAL,
        mel.CONTROLLER_FAILED,
        mel.CONTROLLER_OPTIMAL,
    ]


# -- statistics and array-slow ------------------------------------------------------------


def ost_latency_us(root, host, label, before=None):
    """Mean write service time of an OST as its server's obdfilter stats give it (µs)."""
    stats = parsers.parse_stats(
        (root / "hosts" / host / "proc/fs/lustre/obdfilter" / label / "stats").read_text()
    )
    write = stats["counters"]["write"]
    samples, total = write["samples"], write["sum"]
    if before:
        samples, total = samples - before[0], total - before[1]
    return total / samples if samples else 0.0, (write["samples"], write["sum"])


def busy_jiffies(root, host) -> int:
    """user + nice + system of the server's CPUs (/proc/stat)."""
    return sum(map(int, (root / "hosts" / host / "proc/stat").read_text().split()[1:4]))


def test_array_slow_raises_the_latency_of_that_groups_volumes_only(rack):
    slow_group = f"{ARRAY}-vg02"
    with Rack.open(rack) as opened:
        state = opened.state
        scenarios.add_job(
            state,
            stripe_count=-1,
            size=2**44,
            rate=12 * 2**30,
            io_size=2**20,
            read_fraction=0.2,
            fsname="scratch",
            server=None,
        )
        opened.advance(by=10)
        opened.render()
        targets = {
            t["volume"]: (t["label"], t["mounted_on"])
            for t in state["targets"].values()
            if t.get("array") == ARRAY and t["kind"] == "OST"
        }
        groups = {v: state["arrays"][ARRAY]["volumes"][v]["vg"] for v in targets}
    slow = [v for v in targets if groups[v] == slow_group]
    assert slow and len(slow) < len(targets)
    host = targets[slow[0]][1]
    same_host = [v for v in targets if targets[v][1] == host and groups[v] != slow_group]
    assert same_host

    def volume_stats():
        rows = get(rack, f"{SYSTEM}/analysed-volume-statistics")
        return {r["volumeName"]: r for r in rows if r["volumeName"] in targets}

    def step():
        """10 s of the workload: the server's busy CPU time and its OSTs' counters after."""
        before = busy_jiffies(rack, host)
        change(rack, lambda r: r.advance(by=10), render=True)
        return busy_jiffies(rack, host) - before

    healthy_cpu = step()
    server = ArraysApi(rack)
    server.start()
    try:
        healthy = volume_stats()
        base = {v: ost_latency_us(rack, targets[v][1], targets[v][0])[1] for v in targets}
        failure = change(
            rack,
            lambda r: failures.inject(
                r, "array-slow", array=ARRAY, volume_group=slow_group, latency_ms=50
            ),
        )
        slow_cpu = step()
        now = volume_stats()
        for name in targets:
            if name in slow:
                assert now[name]["writeResponseTime"] > healthy[name]["writeResponseTime"] + 45
                assert now[name]["writeThroughput"] < healthy[name]["writeThroughput"]
            else:
                assert now[name]["writeResponseTime"] < healthy[name]["writeResponseTime"] * 1.5
        # The server sees the same: that group's OSTs' service time rises, its other OSTs
        # keep theirs, and it does less work, not more (slow at the array, not a busy OSS).
        seen = {v: ost_latency_us(rack, targets[v][1], targets[v][0], base[v])[0] for v in targets}
        assert all(seen[v] > 50_000 for v in slow)
        assert all(seen[v] < 20_000 for v in same_host)
        assert slow_cpu <= healthy_cpu

        change(rack, lambda r: failures.clear(r, failure["id"]))
        step()
        again = volume_stats()
        assert all(
            again[v]["writeResponseTime"] < healthy[v]["writeResponseTime"] * 1.5 for v in slow
        )
    finally:
        server.stop()


def test_array_slow_wants_a_volume_group(rack):
    from simulator.state import RackError

    with pytest.raises(RackError, match="array-slow needs --volume-group"):
        change(rack, lambda r: failures.inject(r, "array-slow", array=ARRAY))
