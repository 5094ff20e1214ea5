"""What a server's own tools say about its redundant paths, on the virtual rack, read with the
sensor's parsers: the heartbeat (`corosync-cfgtool -s`), the SAS paths (`multipath -ll`), LNet
(`lnetctl net show`, `lnetctl ping`) and the partner's BMC (`ipmitool -H ... chassis power
status`), healthy and with each failure of the matrix that touches them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sensors import redundancy
from simulator.rack import Rack
from simulator.tests.test_failures import clear, inject, state

BMC = {"oss01": "10.20.0.11", "oss02": "10.20.0.12"}


def heartbeat(host_cmd, host):
    result = host_cmd(host, "corosync-cfgtool", "-s")
    assert result.returncode == 0, result.stderr
    return redundancy.parse_corosync_status(result.stdout)


def paths(host_cmd, host):
    result = host_cmd(host, "multipath", "-ll")
    assert result.returncode == 0, result.stderr
    return redundancy.parse_multipath(result.stdout)


def lnet(host_cmd, host):
    result = host_cmd(host, "lnetctl", "net", "show")
    assert result.returncode == 0, result.stderr
    return redundancy.parse_lnet_nets(result.stdout)


def partner_power(host_cmd, host, of):
    return host_cmd(
        host, "ipmitool", "-I", "lanplus", "-H", BMC[of], "-U", "ostara-fence", "-f", "/dev/null",
        "chassis", "power", "status",
    )  # fmt: skip


def test_a_healthy_pair_reports_every_path_up(clustered_rack, host_cmd):
    assert heartbeat(host_cmd, "oss01") == {
        "running": 1,
        "rings_total": 1,
        "rings_faulty": 0,
        "peers_total": 1,
        "peers_connected": 1,
    }
    maps = paths(host_cmd, "oss01")
    assert len(maps) == 24
    assert set(map(tuple, (m.values() for m in maps.values()))) == {(2, 2, 0)}
    assert "scratch-OST0000" in maps
    assert lnet(host_cmd, "oss01") == {"nets_up": 1, "nets_down": 0}
    assert host_cmd("oss01", "lnetctl", "ping", "10.10.0.12@o2ib").returncode == 0
    shown = partner_power(host_cmd, "oss01", "oss02")
    assert redundancy.parse_power_status(shown.stdout) == 1


def test_one_sas_link_down_fails_one_path_of_each_map_on_that_array(clustered_rack, host_cmd):
    failure = inject(clustered_rack, "sas-link-down", server="oss01", links=1)
    maps = paths(host_cmd, "oss01")
    degraded = sorted(name for name, m in maps.items() if m["paths_failed"])
    assert len(degraded) == 12
    assert all(maps[name]["paths_active"] == 1 for name in degraded)
    assert "failed faulty running" in host_cmd("oss01", "multipath", "-ll").stdout
    assert all(m["paths_failed"] == 0 for m in paths(host_cmd, "oss02").values())
    clear(clustered_rack, failure["id"])
    assert all(m["paths_failed"] == 0 for m in paths(host_cmd, "oss01").values())


def test_all_sas_links_down_queue_io_before_the_partner_fences(clustered_rack, host_cmd):
    assert state(clustered_rack).get("multipath_queue_seconds", 0) == 0
    with Rack.open(clustered_rack) as rack:
        rack.state["multipath_queue_seconds"] = 30
    failure = inject(clustered_rack, "sas-link-down", server="oss01", links=0)
    maps = paths(host_cmd, "oss01")
    assert len(maps) == 24 and all(m["paths_active"] == 0 for m in maps.values())
    assert state(clustered_rack)["fence_history"] == []
    with Rack.open(clustered_rack) as rack:
        rack.advance(by=31)
    assert [h["node"] for h in state(clustered_rack)["fence_history"]] == ["oss01"]
    assert redundancy.parse_power_status(partner_power(host_cmd, "oss02", "oss01").stdout) == 0
    clear(clustered_rack, failure["id"])


def test_heartbeat_lnet_and_private_switch_as_the_tools_show_them(clustered_rack, host_cmd):
    failure = inject(clustered_rack, "lnet-down", server="oss01")
    assert lnet(host_cmd, "oss01") == {"nets_up": 0, "nets_down": 1}
    assert host_cmd("oss01", "lnetctl", "ping", "10.10.0.12@o2ib").returncode != 0
    assert heartbeat(host_cmd, "oss01")["rings_faulty"] == 0
    clear(clustered_rack, failure["id"])

    failure = inject(clustered_rack, "private-switch-down", pair="ssu01")
    for host, partner in (("oss01", "oss02"), ("oss02", "oss01")):
        seen = heartbeat(host_cmd, host)
        assert (seen["rings_faulty"], seen["peers_connected"]) == (1, 0)
        answer = partner_power(host_cmd, host, partner)
        assert answer.returncode == 1 and "Unable to establish" in answer.stderr
    clear(clustered_rack, failure["id"])

    # The partner fences a server whose heartbeat is lost: it sees it gone, powered off.
    failure = inject(clustered_rack, "heartbeat-down", server="oss01")
    assert heartbeat(host_cmd, "oss02")["peers_connected"] == 0
    assert redundancy.parse_power_status(partner_power(host_cmd, "oss02", "oss01").stdout) == 0
    clear(clustered_rack, failure["id"])
    assert heartbeat(host_cmd, "oss02")["peers_connected"] == 1


def process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_down_server_runs_nothing_its_sensor_is_held_until_it_is_up(clustered_rack):
    """The sensor a playbook started for a virtual host stops with the host (its partner's
    poll of the BMC is then all that reports it) and goes on when it is up again."""
    host_root = clustered_rack / "hosts" / "oss01"
    config = host_root / "etc/ostara/sensor.conf"
    sensor = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", "--config", str(config)]
    )
    try:
        (host_root / "run").mkdir(exist_ok=True)
        (host_root / "run/ostara-sensor.pid").write_text(f"{sensor.pid}\n")
        failure = inject(clustered_rack, "server-crash", server="oss01")
        assert process_state(sensor.pid) == "T"
        clear(clustered_rack, failure["id"])
        assert process_state(sensor.pid) in ("S", "R")
    finally:
        sensor.kill()
        sensor.wait()


def pdu_status(host_cmd, host, outlet):
    pdu, plug = outlet.split(":")
    return host_cmd(
        host, "fence_apc_snmp", f"--ip={pdu}", f"--plug={plug}", "--username=ostara-fence",
        "--password-script=/usr/libexec/ostara/fence-secret pdu-auth", "--snmp-version=3",
        "--snmp-sec-level=authPriv", "--snmp-auth-prot=SHA", "--snmp-priv-prot=AES",
        "--snmp-priv-passwd-script=/usr/libexec/ostara/fence-secret pdu-priv", "--action=status",
    )  # fmt: skip


def test_the_pdu_fence_agent_reads_the_partners_outlet_as_the_rack_has_it(clustered_rack, host_cmd):
    outlet = state(clustered_rack)["servers"]["oss02"]["pdu_outlet"]
    answer = pdu_status(host_cmd, "oss01", outlet)
    assert (answer.returncode, answer.stdout) == (0, "Status: ON\n")
    assert redundancy.parse_fence_status(answer.stdout) == 1

    failure = inject(clustered_rack, "pdu-down", server="oss02")
    answer = pdu_status(host_cmd, "oss01", outlet)
    assert answer.returncode == 1 and "ERROR: Connection timed out" in answer.stderr
    assert answer.stdout == ""
    clear(clustered_rack, failure["id"])

    failure = inject(clustered_rack, "private-switch-down", pair="ssu01")
    assert pdu_status(host_cmd, "oss01", outlet).returncode == 1
    clear(clustered_rack, failure["id"])

    pdu = outlet.split(":")[0]
    answer = pdu_status(host_cmd, "oss01", f"{pdu}:99")
    assert answer.returncode == 1 and "Unable to obtain correct plug status" in answer.stderr

    # A fenced partner's outlet reads off (exit 2), as the agent says of a plug that is off.
    failure = inject(clustered_rack, "server-crash", server="oss02")
    answer = pdu_status(host_cmd, "oss01", outlet)
    assert (answer.returncode, answer.stdout) == (2, "Status: OFF\n")
    assert redundancy.parse_fence_status(answer.stdout) == 0
    clear(clustered_rack, failure["id"])
