"""The redundant paths from the server's own tools (sensors/redundancy.py): real output formats
in, points of the metric schema out; a command that fails says so in its point or its error."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from sensors import redundancy
from sensors.config import ConfigError, load_config
from sensors.rounds import Round
from sensors.tests.lp import parse_lines

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"

KNET = """Local node ID 1, transport knet
LINK ID 0 udp
\taddr\t= 10.30.0.11
\tstatus:
\t\tnodeid:          1:\tlocalhost
\t\tnodeid:          2:\tdisconnected
LINK ID 1 udp
\taddr\t= 10.31.0.11
\tstatus:
\t\tnodeid:          1:\tlocalhost
\t\tnodeid:          2:\tconnected
"""
TOTEM = """Printing ring status.
Local node ID 303938909
RING ID 0
\tid\t= 10.0.1.1
\tstatus\t= ring 0 active with no faults
RING ID 1
\tid\t= 192.168.42.1
\tstatus\t= Marking ringid 1 interface 192.168.42.1 FAULTY
"""
MULTIPATH = """scratch-OST0000 (3600a0980a1b2c3d4e5f60718293a4b5c) dm-2 NETAPP,INF-01-00
size=29T features='3 queue_if_no_path pg_init_retries 50' hwhandler='1 alua' wp=rw
|-+- policy='service-time 0' prio=50 status=active
| `- 1:0:0:0 sdb 8:16  active ready running
`-+- policy='service-time 0' prio=10 status=enabled
  `- 2:0:0:0 sdc 8:32  failed faulty running
mpathb (3600d0230000000000e13955cc3757800) dm-3 WINSYS,SF2372
size=269G features='0' hwhandler='0' wp=rw
|-+- policy='round-robin 0' prio=1 status=active
| `- 6:0:0:0 sdd 8:48 active ready running
`-+- policy='round-robin 0' prio=1 status=enabled
  `- 7:0:0:0 sdf 8:80 active ghost running
"""
NET_SHOW = """net:
    - net type: lo
      local NI(s):
        - nid: 0@lo
          status: up
    - net type: o2ib
      local NI(s):
        - nid: 10.10.0.11@o2ib
          status: down
          interfaces:
              0: ib0
"""


def test_corosync_links_and_rings():
    assert redundancy.parse_corosync_status(KNET) == {
        "running": 1,
        "rings_total": 2,
        "rings_faulty": 1,
        "peers_total": 1,
        "peers_connected": 1,
    }
    assert redundancy.parse_corosync_status(TOTEM) == {
        "running": 1,
        "rings_total": 2,
        "rings_faulty": 1,
    }
    with pytest.raises(ValueError, match="no LINK or RING"):
        redundancy.parse_corosync_status("Could not initialize corosync configuration API")


def test_multipath_paths_by_map():
    assert redundancy.parse_multipath(MULTIPATH) == {
        "scratch-OST0000": {"paths_total": 2, "paths_active": 1, "paths_failed": 1},
        "mpathb": {"paths_total": 2, "paths_active": 2, "paths_failed": 0},
    }


def test_lnet_interfaces_without_the_loopback():
    assert redundancy.parse_lnet_nets(NET_SHOW) == {"nets_up": 0, "nets_down": 1}


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_the_collectors_write_points_and_a_silent_bmc_is_a_point_too(tmp_path):
    rnd = Round(1000, {"server": "oss01", "ssu": "ssu01"})
    redundancy.collect_cluster(rnd, script(tmp_path, "cfg", f"cat <<'E'\n{KNET}E"), 5)
    redundancy.collect_multipath(rnd, script(tmp_path, "mp", f"cat <<'E'\n{MULTIPATH}E"), 5)
    lnetctl = script(tmp_path, "lnetctl", f"[ \"$1\" = ping ] && exit 1\ncat <<'E'\n{NET_SHOW}E")
    redundancy.collect_lnet_state(rnd, lnetctl, ("10.10.0.12@o2ib",), 5)
    redundancy.collect_partner_power(
        rnd, "oss02", script(tmp_path, "on", "echo 'Chassis Power is off'"), 5
    )
    redundancy.collect_partner_power(
        rnd,
        "oss02",
        script(
            tmp_path, "off", "echo 'Error: Unable to establish IPMI v2 / RMCP+ session' >&2\nexit 1"
        ),
        5,
    )
    redundancy.collect_cluster(rnd, script(tmp_path, "down", "echo nope >&2; exit 1"), 5)
    points = parse_lines(rnd.lines)
    assert rnd.errors == 0
    found = [(p.measurement, p.tags, p.fields) for p in points]
    assert ("cluster", {"server": "oss01", "ssu": "ssu01"}, {
        "running": 1, "rings_total": 2, "rings_faulty": 1, "peers_total": 1, "peers_connected": 1,
    }) in found  # fmt: skip
    assert ("cluster", {"server": "oss01", "ssu": "ssu01"}, {"running": 0}) in found
    assert (
        "multipath",
        {"server": "oss01", "ssu": "ssu01", "device": "scratch-OST0000"},
        {"paths_total": 2, "paths_active": 1, "paths_failed": 1},
    ) in found
    assert (
        "multipath",
        {"server": "oss01", "ssu": "ssu01"},
        {"maps": 2, "maps_degraded": 1, "maps_failed": 0},
    ) in found
    assert ("lnet", {"server": "oss01", "ssu": "ssu01"}, {
        "nets_up": 0, "nets_down": 1, "peers_pinged": 1, "peer_ping_ok": 0,
    }) in found  # fmt: skip
    power = [(p.tags, p.fields) for p in points if p.measurement == "bmc_power"]
    assert power == [
        ({"server": "oss02", "polled_by": "oss01", "ssu": "ssu01"}, {"answered": 1, "power_on": 0}),
        ({"server": "oss02", "polled_by": "oss01", "ssu": "ssu01"}, {"answered": 0}),
    ]


def test_the_example_config_names_every_command(tmp_path):
    config = load_config(DEPLOY / "sensor.conf.example")
    assert config.cluster_command == "corosync-cfgtool -s"
    assert config.multipath_command == "multipath -ll"
    assert config.lnet_peers == ("10.10.0.12@o2ib",)
    assert config.partner_host == "oss02"
    assert config.partner_bmc_command.endswith("chassis power status")
    assert config.partner_pdu_command.startswith("fence_apc_snmp --ip=pdu2 --plug=4 ")
    assert config.partner_pdu_command.endswith("--action=status")
    assert "partner_pdu" in config.collectors
    path = tmp_path / "sensor.conf"
    path.write_text("[partner]\nhost = oss02\n")
    with pytest.raises(ConfigError, match=r"\[partner\] host goes with a bmc_command or a pdu"):
        load_config(path)
    path.write_text("[partner]\npdu_command = fence_apc_snmp --ip=pdu2 --action=status\n")
    with pytest.raises(ConfigError, match=r"\[partner\] host goes with"):
        load_config(path)
    path.write_text("[partner]\nhost = oss02\npdu_command = fence_apc_snmp --action=status\n")
    assert load_config(path).partner_pdu_command == "fence_apc_snmp --action=status"


# fence-agents' fencing.py: `Status: ON` exit 0, `Status: OFF` exit 2, failures logged, exit 1.
FENCE_FAILED = (
    "echo '2026-11-27 07:00:00,000 ERROR: Failed: Unable to obtain correct plug status or plug "
    "is not available' >&2\nexit 1"
)


def test_the_partners_pdu_outlet_through_the_fence_agents_status(tmp_path):
    rnd = Round(1000, {"server": "oss01"})
    for name, body in (
        ("on", "echo 'Status: ON'"),
        ("off", "echo 'Status: OFF'; exit 2"),
        ("failed", FENCE_FAILED),
        ("timeout", "echo '2026-11-27 07:00:00,000 ERROR: Connection timed out' >&2; exit 1"),
        ("hung", "sleep 5"),
    ):
        command = script(tmp_path, name, body)
        redundancy.collect_partner_pdu(rnd, "oss02", f"{command} --action=status", 0.5)
    assert rnd.errors == 0
    power = [(p.tags, p.fields) for p in parse_lines(rnd.lines) if p.measurement == "pdu_power"]
    tags = {"server": "oss02", "polled_by": "oss01"}
    assert power == [
        (tags, {"answered": 1, "power_on": 1}),
        (tags, {"answered": 1, "power_on": 0}),
        (tags, {"answered": 0}),
        (tags, {"answered": 0}),
        (tags, {"answered": 0}),
    ]
    # No agent installed, or an answer that is not a status: a problem of the sensor, no point.
    redundancy.collect_partner_pdu(rnd, "oss02", str(tmp_path / "missing"), 1)
    redundancy.collect_partner_pdu(rnd, "oss02", script(tmp_path, "odd", "echo Success"), 1)
    assert rnd.errors == 2
    assert len(parse_lines(rnd.lines)) == 5
    assert redundancy.parse_fence_status("Status: OFF\n") == 0
    with pytest.raises(ValueError, match="not a fence agent's status"):
        redundancy.parse_fence_status("Chassis Power is on")
