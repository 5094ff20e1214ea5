"""A real-cluster pair's wires, PDU and failures without its cluster: namespaces only (about a
second), so the cheap properties of simulator/realcluster are proved here and the costly ones
in test_real_cluster.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import pytest

from simulator import failures, operations, realcluster
from simulator.rack import REPO_ROOT, Rack
from simulator.realcluster import network, node, pdu
from simulator.state import RackError
from simulator.tests.test_real_cluster import ADDRESSES, real_plan

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and ip netns"
)


def test_the_unit_verb_without_arguments_prints_its_usage():
    done = subprocess.run(
        [sys.executable, "-m", "simulator.realcluster", "unit"],
        capture_output=True, text=True, timeout=60, cwd=REPO_ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    assert "unit VERB UNIT..." in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture
def wired(tmp_path):
    """A real pair racked and cabled (switch, servers, BMCs), nothing powered."""
    root = tmp_path / "rack"
    plan = real_plan()
    with Rack.open(root, create=True) as rack:
        rack.add(plan)
        realcluster.mark_real(rack.state, "mds01")
    prefix = network.prefix_for(root)
    try:
        for host, address in ADDRESSES.items():
            network.ensure_server(
                prefix, host, address["mgmt_address"], address["heartbeat_address"]
            )
            network.ensure_bmc(prefix, host, address["bmc"])
        yield root
    finally:
        network.remove(prefix)


def _addresses(namespace: str) -> str:
    return subprocess.run(["ip", "-n", namespace, "-o", "addr", "show"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


@needs_root
def test_start_finishes_namespaces_a_failed_start_cabled_half_way(tmp_path):
    prefix = network.prefix_for(tmp_path / "rack")
    try:
        # A start that stopped after `ip netns add`: a bare switch, a server without NICs.
        subprocess.run(["ip", "netns", "add", f"{prefix}-sw"], check=True)
        subprocess.run(["ip", "netns", "add", f"{prefix}-mds01"], check=True)
        network.ensure_server(prefix, "mds01", "169.254.1.1", "169.254.2.1")
        inside = _addresses(f"{prefix}-mds01")
        assert "mgmt0    inet 169.254.1.1/24" in inside and "hb0    inet 169.254.2.1/24" in inside
        assert "mgmt    inet 169.254.1.254/24" in _addresses(f"{prefix}-sw")
        assert network.link_is_up(prefix, "mds01", "mgmt")
        assert network.link_is_up(prefix, "mds01", "hb")
        # One that stopped after the veth: no address, the switch's end on no bridge.
        subprocess.run(["ip", "-n", f"{prefix}-mds01", "addr", "flush", "dev", "hb0"], check=True)
        port = network._port("mds01", "h0")
        subprocess.run(["ip", "-n", f"{prefix}-sw", "link", "set", port, "nomaster"], check=True)
        network.set_link(prefix, "mds01", "hb", up=False)  # and its cable pulled meanwhile
        network.ensure_server(prefix, "mds01", "169.254.1.1", "169.254.2.1")
        assert "hb0    inet 169.254.2.1/24" in _addresses(f"{prefix}-mds01")
        ports = subprocess.run(["ip", "-n", f"{prefix}-sw", "-o", "link", "show", "master", "hb"],
                               capture_output=True, text=True, check=True).stdout  # fmt: skip
        assert port in ports
        assert not network.link_is_up(prefix, "mds01", "hb")  # a pulled cable stays pulled
    finally:
        network.remove(prefix)
    assert not any(n.startswith(f"{prefix}-") for n in network.namespaces())


@needs_root
def test_failures_on_a_real_pair_pull_and_plug_its_real_cables(wired):
    prefix = network.prefix_for(wired)
    with Rack.open(wired) as rack:
        heartbeat = failures.inject(rack, "heartbeat-down", server="mds02")
        bmc_down = failures.inject(rack, "bmc-down", server="mds01")
        switch = failures.inject(rack, "private-switch-down", pair="mds01")
    assert not network.link_is_up(prefix, "mds02", "hb")
    assert not network.link_is_up(prefix, "mds01", "hb")  # the private switch
    assert not network.link_is_up(prefix, "mds01", "bmc")
    assert network.link_is_up(prefix, "mds02", "bmc")
    assert network.link_is_up(prefix, "mds01", "mgmt") and network.link_is_up(
        prefix, "mds02", "mgmt"
    )
    with Rack.open(wired, read_only=True) as rack:  # the rack records them for the portal
        recorded = {f["kind"]: f["where"] for f in rack.status()["failures"].values()}
    assert recorded == {
        "heartbeat-down": "mds02", "bmc-down": "mds01", "private-switch-down": "mds01",
    }  # fmt: skip
    with Rack.open(wired) as rack:
        failures.clear(rack, heartbeat["id"])
    # The switch is still down: mds02's heartbeat cable is in, but leads nowhere.
    assert not network.link_is_up(prefix, "mds02", "hb")
    with Rack.open(wired) as rack:
        failures.clear(rack, switch["id"])
        failures.clear(rack, bmc_down["id"])
    for host in ADDRESSES:
        for cable in ("mgmt", "hb", "bmc"):
            assert network.link_is_up(prefix, host, cable), (host, cable)


@needs_root
def test_a_crash_needs_a_running_server(wired):
    with Rack.open(wired) as rack:
        with pytest.raises(RackError, match="mds01 is not running"):
            failures.inject(rack, "server-crash", server="mds01")
        assert rack.state["failures"] == {}


@needs_root
def test_the_pdu_does_not_answer_a_fencer_cut_off_from_the_management_network(wired, capsys):
    status = ["--action=status", "--ip=pdu1", "--plug=1"]  # mds01's outlet, asked by mds02
    assert pdu.run(wired, "mds02", status) == 0
    assert "Status: ON" in capsys.readouterr().out
    network.set_link(network.prefix_for(wired), "mds02", "mgmt", up=False)
    assert pdu.run(wired, "mds02", status) == 1
    assert "Connection timed out" in capsys.readouterr().err
    assert pdu.run(wired, "mds01", ["--action=status", "--ip=pdu2", "--plug=1"]) == 0


@needs_root
def test_a_pdu_reboot_fails_when_the_power_does_not_come_back(wired, capsys, monkeypatch):
    monkeypatch.setattr(pdu, "ON_SECONDS", 1.0)
    # Its BMC is gone with its namespace (no BMC waiting to time out): no power comes back.
    subprocess.run(["ip", "netns", "del", f"{network.prefix_for(wired)}-mds01-bmc"], check=True)
    with Rack.open(wired) as rack:
        operations.power_off(rack.state, "mds01")
    assert pdu.run(wired, "mds02", ["--action=reboot", "--ip=pdu1", "--plug=1"]) == 1
    assert "Failed: the server's power did not come back" in capsys.readouterr().err


@needs_root
def test_starting_a_corosync_that_never_answers_fails_as_systemd_does(tmp_path):
    """`systemctl start corosync` inside a server (the shim's `unit start`), with a corosync
    that runs but never answers, in throwaway PID, mount and network namespaces."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "corosync").write_text("#!/bin/sh\nexec sleep 60\n")
    (fake / "corosync-cfgtool").write_text("#!/bin/sh\nexit 1\n")  # no answer
    for tool in fake.iterdir():
        tool.chmod(0o755)
    logs = tmp_path / "log"
    logs.mkdir()
    code = (
        "from simulator.realcluster import node, shims; node.ANSWER_SECONDS = 1.0; "
        "raise SystemExit(shims.unit('start', ['corosync.service']))"
    )
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "--net", "sh", "-c",
         f"mkdir -p /var/log/cluster && mount --bind {logs} /var/log/cluster"
         f" && exec {sys.executable} -c \"{code}\""],
        capture_output=True, text=True, timeout=60, cwd=REPO_ROOT,
        env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Job for corosync.service failed" in done.stderr


@needs_root
def test_a_boot_never_writes_off_a_server_a_newer_boot_runs(wired):
    """A fence's reboot may start the next boot while the last one still writes the server off:
    once the newer boot owns the server, the last one's "off" is not written (it would land
    after the "on" and hold the running server's sensor for good)."""
    bookkeeping = node.host_dir(wired, "mds01") / node.CLUSTER_DIR
    bookkeeping.mkdir(parents=True, exist_ok=True)
    node.write_on(wired, "mds01")
    newer = subprocess.Popen(["sleep", "60"])  # the newer boot, which wrote its pid
    try:
        (bookkeeping / "boot.pid").write_text(str(newer.pid))
        assert node.write_off(wired, "mds01") is False
        with Rack.open(wired, read_only=True) as rack:
            assert rack.state["servers"]["mds01"]["state"] == "up"
        assert (bookkeeping / "boot.pid").read_text() == str(newer.pid)
    finally:
        newer.kill()
        newer.wait()
    (bookkeeping / "boot.pid").write_text(str(os.getpid()))  # this boot's own server
    assert node.write_off(wired, "mds01") is True
    with Rack.open(wired, read_only=True) as rack:
        assert rack.state["servers"]["mds01"]["state"] == "off"
    assert not (bookkeeping / "boot.pid").exists()


@needs_root
def test_a_boot_starts_afresh_from_what_a_killed_boot_left(wired):
    """A boot its BMC killed before it wrote the server off left it "up", its parameters set: the
    next boot starts it as a reboot does, with none."""
    node.write_on(wired, "mds01")
    with Rack.open(wired) as rack:
        server = rack.state["servers"]["mds01"]
        server["params"] = {"obdfilter.*.readcache_max_filesize": "1M"}
        server["booted"] = first = rack.now - 600
    node.write_on(wired, "mds01")
    with Rack.open(wired, read_only=True) as rack:
        server = rack.state["servers"]["mds01"]
        assert (server["power"], server["state"], server["params"]) == ("on", "up", {})
        assert server["booted"] > first


def test_a_server_that_boots_while_its_rack_is_added_waits_for_it(tmp_path):
    """`add --real-cluster` powers the servers on before it has written rack.json (it holds the
    rack's lock until then): a boot that opens the rack meanwhile waits for it, where it found
    "no virtual rack" and the server never started (its Corosync never joined)."""
    root = tmp_path / "rack"
    opened = []

    def boot():
        with Rack.open(root) as rack:
            opened.append(sorted(rack.state["servers"]))

    with Rack.open(root, create=True) as rack:
        rack.add(real_plan())
        booting = threading.Thread(target=boot)
        booting.start()
        booting.join(1.0)
        assert booting.is_alive()  # waiting for the rack, not refused
    booting.join(30)
    assert opened == [["mds01", "mds02"]]
    with pytest.raises(RackError, match="no virtual rack"):
        Rack.open(tmp_path / "none").__enter__()
