"""The pair's corosync.conf: what `pcs cluster setup` writes, two knet links, node ids as in the
CIB; the spec's link addresses checked field by field; an existing file read back."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from provisioning.ha import build_cib
from provisioning.ha.corosync import (
    build_corosync_conf,
    cluster_nodes,
    one_link_servers,
    read_cluster_name,
)
from provisioning.planner import SpecError, make_plan

SPECS = Path(__file__).parent / "specs"
LINKS = (("169.254.1.1", "169.254.2.1"), ("169.254.1.2", "169.254.2.2"))


def mds_spec(links=LINKS) -> dict:
    spec = json.loads((SPECS / "mds_pair.json").read_text())
    for server, (mgmt, heartbeat) in zip(spec["servers"], links, strict=True):
        server.update(mgmt_address=mgmt, heartbeat_address=heartbeat)
    return spec


def errors_of(spec: dict) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        make_plan(spec)
    return caught.value.errors


def test_two_knet_links_per_node_and_the_two_node_quorum():
    conf = build_corosync_conf(make_plan(mds_spec()))
    assert "    transport: knet\n    crypto_cipher: aes256\n    crypto_hash: sha256\n" in conf
    assert (
        "    node {\n        ring0_addr: 169.254.1.1\n        ring1_addr: 169.254.2.1\n"
        "        name: mds01\n        nodeid: 1\n    }\n" in conf
    )
    assert "ring1_addr: 169.254.2.2\n        name: mds02\n        nodeid: 2\n" in conf
    assert "quorum {\n    provider: corosync_votequorum\n    two_node: 1\n}\n" in conf
    assert read_cluster_name(conf) == "scratch-mds01-mds"
    assert cluster_nodes(conf) == ["mds01", "mds02"]


def test_node_ids_are_the_cibs_node_ids():
    plan = make_plan(mds_spec())
    # The planner may put either server first; the CIB and corosync.conf must agree.
    plan["servers"].reverse()
    conf = build_corosync_conf(plan)
    cib = build_cib(plan)
    for nodeid, name in ((1, "mds02"), (2, "mds01")):
        assert f"name: {name}\n        nodeid: {nodeid}\n" in conf
        assert f'<node id="{nodeid}" uname="{name}"' in cib


def test_without_addresses_corosync_runs_one_link_on_the_host_name():
    plan = make_plan(json.loads((SPECS / "mds_pair.json").read_text()))
    conf = build_corosync_conf(plan)
    assert "ring0_addr: mds01\n        name: mds01\n" in conf
    assert "ring1_addr" not in conf
    assert one_link_servers(plan) == ["mds01", "mds02"]
    assert one_link_servers(make_plan(mds_spec())) == []


@pytest.mark.skipif(shutil.which("pcs") is None, reason="pcs is not installed")
def test_the_file_is_the_one_pcs_cluster_setup_writes(tmp_path):
    """pcs writes the file locally with --corosync_conf; it is ours but for the log file's
    directory, which is the distribution's (Debian: /var/log/corosync, RHEL: /var/log/cluster)."""
    written = tmp_path / "pcs-corosync.conf"
    subprocess.run(
        ["pcs", "cluster", "setup", "scratch-mds01-mds"]
        + ["mds01", "addr=169.254.1.1", "addr=169.254.2.1"]
        + ["mds02", "addr=169.254.1.2", "addr=169.254.2.2"]
        + ["--corosync_conf", str(written), "--no-cluster-uuid"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    ours = build_corosync_conf(make_plan(mds_spec()))
    theirs = written.read_text()
    assert read_cluster_name(theirs) == read_cluster_name(ours)
    assert theirs.replace("/var/log/corosync/", "/var/log/cluster/") == ours


@pytest.mark.skipif(shutil.which("corosync") is None, reason="corosync is not installed")
def test_corosync_itself_accepts_the_file(tmp_path):
    """`corosync -t` checks a file without starting; it wants this host in the nodelist and
    the authkey readable, so the first node's links are loopback addresses and the key is
    named in totem (neither is what a server gets)."""
    spec = mds_spec((("127.0.0.1", "127.0.0.2"), ("169.254.1.2", "169.254.2.2")))
    key = tmp_path / "authkey"
    key.write_bytes(bytes(range(256)))
    key.chmod(0o400)
    conf = build_corosync_conf(make_plan(spec)).replace(
        "    crypto_hash: sha256\n", f"    crypto_hash: sha256\n    keyfile: {key}\n"
    )
    (tmp_path / "corosync.conf").write_text(conf)
    # The file logs where RHEL's corosync package logs; Debian's package makes no such directory
    # (it logs to /var/log/corosync), and `corosync -t` opens the log file.
    Path("/var/log/cluster").mkdir(parents=True, exist_ok=True)
    checked = subprocess.run(
        ["corosync", "-t", "-c", str(tmp_path / "corosync.conf")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_another_clusters_file_is_read_back():
    other = """# written by hand
totem {
    version: 2
    cluster_name: other
    transport: knet
}
nodelist {
    node {
        ring0_addr: 192.0.2.1
        name: a
        nodeid: 1
    }
    node {
        ring0_addr: b
        nodeid: 2
    }
}
"""
    assert read_cluster_name(other) == "other"
    assert cluster_nodes(other) == ["a", "b"]
    assert read_cluster_name("") is None
    assert cluster_nodes("") == []


@pytest.mark.parametrize(
    ("server", "field", "value", "expected"),
    [
        (1, "heartbeat_address", "hb-mds02", "is not an IPv4 or IPv6 address"),
        (0, "mgmt_address", "169.254.1.300", "octet 300 is above 255"),
        (1, "mgmt_address", "fe80::zz", "is not an IPv6 address"),
        (1, "mgmt_address", "fe80::1%x\n}\ntotem {", "without a zone"),
        (0, "heartbeat_address", 7, "must be a string"),
    ],
)
def test_a_bad_link_address_is_named_by_its_field(server, field, value, expected):
    spec = mds_spec()
    spec["servers"][server][field] = value
    errors = errors_of(spec)
    assert list(errors) == [f"servers[{server}].{field}"]
    assert expected in errors[f"servers[{server}].{field}"]


def test_the_two_links_of_a_server_must_differ():
    spec = mds_spec()
    spec["servers"][1]["heartbeat_address"] = "169.254.1.2"
    errors = errors_of(spec)
    assert list(errors) == ["servers[1].heartbeat_address"]
    assert "also the mgmt_address" in errors["servers[1].heartbeat_address"]


def test_a_link_address_belongs_to_one_server_of_the_pair():
    spec = mds_spec()
    spec["servers"][1]["heartbeat_address"] = "169.254.2.1"
    errors = errors_of(spec)
    assert errors == {
        "servers[1].heartbeat_address": "'169.254.2.1' duplicates servers[0].heartbeat_address: "
        "each Corosync link address belongs to one server"
    }


def test_ipv6_links_are_accepted_and_planned():
    spec = mds_spec((("fe80::1", "fe80::2:1"), ("fe80::2", "fe80::2:2")))
    plan = make_plan(spec)
    assert plan["servers"][0]["heartbeat_address"] == "fe80::2:1"
    assert "ring0_addr: fe80::2\n" in build_corosync_conf(plan)


def test_a_server_gives_both_links_or_neither():
    spec = mds_spec()
    del spec["servers"][0]["heartbeat_address"]
    errors = errors_of(spec)
    assert list(errors) == ["servers[0].heartbeat_address"]
    assert errors["servers[0].heartbeat_address"].startswith("is required with mgmt_address")


def test_both_servers_of_a_pair_have_the_same_links():
    spec = mds_spec()
    for key in ("mgmt_address", "heartbeat_address"):
        del spec["servers"][0][key]
    errors = errors_of(spec)
    assert errors == {
        "servers[0].mgmt_address": "is required: servers[1] has two Corosync links, and both "
        "servers of a pair need the same links"
    }
