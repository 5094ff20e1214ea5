"""A virtual MDS pair whose cluster is real: Corosync with two knet links, Pacemaker, ipmi_sim
BMCs and fence_ipmilan, in namespaces this test creates (link-local addresses only).

Proves what the imitation only claims: the playbooks (corosync.yml, then ha.yml, as the
provisioning job runs them) build the cluster from nothing, Pacemaker starts the targets
through the Lustre agent (mounted in the rack, as the sensors see them), a second run changes
nothing, and a server that crashes (its BMC powers it off) is fenced by its partner through
fence_ipmilan and its targets run on the partner; the heartbeat link down leaves one cluster;
both links down, fencing decides; the BMC out of reach, the PDU fences. The failures are
`simulator inject`'s (simulator/realcluster/faults.py: real cables, a real panic) where the
failure matrix has a row for them; the rack is removed with `simulator remove-real`.

The scenarios share one pair (a pair costs about 50 s to build) and run in order: each starts
from where the last left the targets, as an operator's afternoon would. A scenario that brings a
server back ends only once the pair is whole again: both servers in one cluster, each with the
health attributes the CIB requires of a server that runs a target. A server that has just
rejoined has none until its health agents start; were its partner to crash then, the fence
would end with no server able to take the targets, and the crashed one (rebooted by the fence
within seconds here) would get them back as their preferred server.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from provisioning.ha import build_cib, first_push
from provisioning.ha.corosync import build_corosync_conf, playbook_cluster
from provisioning.planner import make_plan
from provisioning.runner import run_playbook
from provisioning.tests.test_corosync_playbook import AUTHKEY, inventory
from simulator import failures, provision, realcluster
from simulator.rack import Rack
from simulator.state import RackError

# Also the mark of the portal's tests on a real pair.
NEEDS_REAL_CLUSTERS = pytest.mark.skipif(
    os.geteuid() != 0 or bool(realcluster.missing_tools()),
    reason="needs root and corosync, pacemaker, fence-agents, openipmi, ipmitool",
)
pytestmark = [NEEDS_REAL_CLUSTERS, pytest.mark.rack(seconds=340)]

# The pair on the rack's management (169.254.1.0/24) and heartbeat (169.254.2.0/24) networks.
ADDRESSES = {
    "mds01": {"mgmt_address": "169.254.1.1", "heartbeat_address": "169.254.2.1",
              "bmc": "169.254.1.101"},
    "mds02": {"mgmt_address": "169.254.1.2", "heartbeat_address": "169.254.2.2",
              "bmc": "169.254.1.102"},
}  # fmt: skip
SPEC = {
    "filesystem": "scratch", "ssu": "mds01", "role": "mds", "raid": "10", "segment_kib": 128,
    "first_mdt_index": 0,
    "servers": [
        {"hostname": "mds01", "nids": ["10.10.0.1@o2ib"], "bmc": "169.254.1.101",
         "pdu_outlet": "pdu1:1"},
        {"hostname": "mds02", "nids": ["10.10.0.2@o2ib"], "bmc": "169.254.1.102",
         "pdu_outlet": "pdu2:1"},
    ],
    "arrays": [{"name": "mds01-a", "controller": "E2724", "drive_tb": 1.2}],
}  # fmt: skip
REPO = Path(__file__).resolve().parents[2]
# The node attributes the CIB's health rules require (above 0) of a server that runs a target:
# healthLNET's and healthLUSTRE's `name` (provisioning.ha.first_push lists them).
HEALTH_ATTRIBUTES = ("lustred", "pingd")
PACEMAKER_LOG = "var/log/pacemaker/pacemaker.log"
# What a failed wait quotes of each pacemaker.log: the scheduler's decisions, fencing, the
# health attributes, membership, operations' results and failures.
EXPLAINING = re.compile(
    r"Actions: |targeting \S+ using|Setting (fail-count|lustred|pingd)|Result of (start|stop)"
    r"|Unexpected result|controld.*Node \S+ state is now"
)


def real_plan() -> dict:
    """SPEC's plan with the pair's link-local addresses (what mark_real requires)."""
    plan = make_plan(SPEC)
    for server in plan["servers"]:
        server.update(ADDRESSES[server["hostname"]])
    return plan


PLAYBOOKS = ("corosync.yml", "ha.yml")


def _on(rack_root: Path, host: str, *argv: str, check: bool = True) -> str:
    tool = rack_root / "hosts" / host / "bin" / argv[0]
    done = subprocess.run([str(tool), *argv[1:]], capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} on {host}: {done.returncode} {done.stderr}")
    return done.stdout


def _wait(
    what: str,
    condition,
    timeout: float = 120.0,
    every: float = 1.0,
    explain: Callable[[], str] | None = None,
):
    """Until `condition()` is true (its value); on timeout, fail with what `explain()` says."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}" + (f"\n{explain()}" if explain else "")
            )
        time.sleep(every)


def _log_marks(rack_root: Path) -> dict[str, int]:
    """Where each server's pacemaker.log ends now: a scenario's explanation starts there."""
    marks = {}
    for host in ADDRESSES:
        log = rack_root / "hosts" / host / PACEMAKER_LOG
        marks[host] = log.stat().st_size if log.exists() else 0
    return marks


def _explanation(rack_root: Path, by: str, since: dict[str, int]) -> str:
    """What the cluster shows and decided: crm_mon on `by` (resources, node attributes, fail
    counts, fencing history), then each pacemaker.log's telling lines since `since`."""
    status = _on(rack_root, by, "crm_mon", "-1", "-r", "-A", "-f", "-m", "3", check=False)
    parts = [f"crm_mon on {by}:\n{status}"]
    for host in ADDRESSES:
        log = rack_root / "hosts" / host / PACEMAKER_LOG
        with open(log, "rb") as opened:
            opened.seek(since.get(host, 0))
            lines = opened.read().decode(errors="replace").splitlines()
        telling = [line for line in lines if EXPLAINING.search(line)][-60:]
        parts.append(f"{host}'s pacemaker.log since the scenario began:\n" + "\n".join(telling))
    return "\n".join(parts)


def _placements(rack_root: Path, host: str) -> dict[str, str | None]:
    """Each Lustre target -> the server crm_mon says it runs on (None: stopped)."""
    status = _on(rack_root, host, "crm_mon", "-1", "--output-as=xml", check=False)
    if not status.strip():
        return {}
    found = {}
    for resource in ET.fromstring(status).iter("resource"):
        if resource.get("resource_agent") == "ocf:lustre:Lustre":
            node = resource.find("node")
            started = resource.get("role") == "Started" and node is not None
            found[resource.get("id")] = node.get("name") if started else None
    return found


def _provision(rack_root: Path, plan: dict, work: Path, playbook: str):
    """One playbook on the pair, with what the provisioning job gives it."""
    cib = build_cib(plan, {"ipmi_username": realcluster.bmc.USER})
    variables = {
        "ostara_corosync": {plan["ssu"]: playbook_cluster(plan)},
        "ostara_cibs": {plan["ssu"]: cib},
        "ostara_first_cibs": {plan["ssu"]: first_push(cib)},
        "ostara_targets": {plan["ssu"]: [{"label": t["label"]} for t in plan["targets"]]},
        "ostara_fence_secret_script": str(REPO / "provisioning/ha/fence-secret"),
    }
    secrets: dict[str, str | bytes] = {f"corosync-authkey-{plan['ssu']}": AUTHKEY}
    for host in ADDRESSES:
        secrets[f"bmc-{host}"] = realcluster.bmc.password(rack_root, host) + "\n"
    return run_playbook(
        playbook,
        inventory(rack_root, plan),
        variables,
        work_dir=work,
        secrets=secrets,
    )


@pytest.fixture(scope="module")
def real_pair(tmp_path_factory):
    rack_root = tmp_path_factory.mktemp("real-rack") / "rack"
    work = tmp_path_factory.mktemp("real-rack-ansible")
    plan = real_plan()
    with Rack.open(rack_root, create=True) as rack:
        rack.add(plan)
        realcluster.mark_real(rack.state, "mds01")
        rack.install_commands()
        provision.build(rack, plan, mount=False)
    try:
        powered = time.monotonic()
        with Rack.open(rack_root) as rack:
            realcluster.start(rack.root, rack.state)
        for host in ADDRESSES:  # LNet up, as lnet.yml leaves it: healthLNET pings the NIDs
            _wait(f"{host} powered on", lambda h=host: realcluster.node.init_pid(rack_root, h))
            _on(rack_root, host, "lnetctl", "lnet", "configure")
            _on(rack_root, host, "lnetctl", "net", "add", "--net", "o2ib", "--if", "ib0",
                check=False)  # fmt: skip
        started = time.monotonic()
        runs = {name: _provision(rack_root, plan, work, name) for name in PLAYBOOKS}
        timings = {"power_on_s": round(started - powered, 1),
                   "provision_s": round(time.monotonic() - started, 1)}  # fmt: skip
        yield {"root": rack_root, "plan": plan, "runs": runs, "work": work, "timings": timings}
    finally:
        removed = subprocess.run(
            [sys.executable, "-m", "simulator", "remove-real", "--rack", str(rack_root)],
            capture_output=True, text=True, timeout=120, cwd=REPO,
        )  # fmt: skip
    # Everything powered off, every namespace gone, the rack says so.
    assert removed.returncode == 0, removed.stderr
    prefix = realcluster.network.prefix_for(rack_root)
    assert not [n for n in realcluster.network.namespaces() if n.startswith(f"{prefix}-")]
    ours = subprocess.run(["pgrep", "-f", str(rack_root)], capture_output=True, text=True)
    assert ours.stdout == "", ours.stdout
    with Rack.open(rack_root, read_only=True) as rack:
        assert {s["power"] for s in rack.state["servers"].values()} == {"off"}


def test_the_playbooks_build_the_cluster_from_nothing(real_pair):
    root, plan, runs = real_pair["root"], real_pair["plan"], real_pair["runs"]
    for name, result in runs.items():
        assert result.succeeded, f"{name}: {result.summary()}"
    for host in ADDRESSES:
        etc = root / "hosts" / host / "etc" / "corosync"
        assert (etc / "corosync.conf").read_text() == build_corosync_conf(plan)
        assert (etc / "authkey").read_bytes() == AUTHKEY
        enabled = _on(root, host, "systemctl", "is-enabled", "corosync", "pacemaker")
        assert enabled.split() == ["enabled", "enabled"]
    # The real Corosync: both knet links up, the partner connected on each.
    links = _on(root, "mds01", "corosync-cfgtool", "-s")
    assert "LINK ID 0" in links and "addr\t= 169.254.1.1" in links
    assert "LINK ID 1" in links and "addr\t= 169.254.2.1" in links
    assert links.count("nodeid:          2:\tconnected") == 2, links
    quorum = _on(root, "mds01", "corosync-quorumtool", "-s", check=False)
    assert "2Node" in quorum and "WaitForAll" in quorum, quorum
    assert _placements(root, "mds01") == {"MGS": "mds01", "scratch-MDT0000": "mds01"}
    # The attributes this test waits for are the ones the pushed CIB's health rules require.
    cib = build_cib(plan, {"ipmi_username": realcluster.bmc.USER})
    assert first_push(cib)["attributes"] == sorted(HEALTH_ATTRIBUTES)
    assert _able(root, "mds01") == set(ADDRESSES)
    with Rack.open(root, read_only=True) as rack:  # the agent mounted them in the rack
        assert rack.state["targets"]["MGS"]["mounted_on"] == "mds01"
        assert rack.state["targets"]["scratch-MDT0000"]["mounted_on"] == "mds01"
    # Idempotent on the real stack too.
    for name in PLAYBOOKS:
        again = _provision(root, plan, real_pair["work"], name)
        assert again.succeeded and again.changed_total == 0, (name, again.changed)
    print(json.dumps(real_pair["timings"]))
    # pacemaker.service Requires corosync.service: restarting Corosync restarts Pacemaker.
    since = _log_marks(root)
    _on(root, "mds02", "systemctl", "restart", "corosync")
    active = _on(root, "mds02", "systemctl", "is-active", "corosync", "pacemaker", check=False)
    assert active.split() == ["active", "active"]
    _pair_whole(root, "mds01", since)  # mds02 back, its health agents running again


def test_a_crashed_server_is_fenced_by_its_partner_who_runs_its_targets(real_pair):
    root = real_pair["root"]
    _pair_whole(root, "mds02")
    assert _placements(root, "mds01") == {"MGS": "mds01", "scratch-MDT0000": "mds01"}
    # The appliance's ipmitool (and a server's, as the sensors' partner poll runs it) asks the
    # real BMC: ipmi_sim answers what it knows.
    login = ["-I", "lanplus", "-C", "3", "-H", "169.254.1.101", "-U", realcluster.bmc.USER,
             "-P", realcluster.bmc.password(root, "mds01")]  # fmt: skip
    for ipmitool in (root / "bin/ipmitool", root / "hosts/mds02/bin/ipmitool"):
        done = subprocess.run([str(ipmitool), *login, "mc", "info"], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert "Manufacturer ID" in done.stdout and "Ostara" not in done.stdout, done.stderr
    # The crash: mds01's BMC powers it off. mds02 fences it (fence_ipmilan) and runs its targets.
    crashed, since = time.monotonic(), _log_marks(root)
    done = realcluster.bmc.ipmitool(root, "mds01", "169.254.1.101", "chassis", "power", "off")
    assert "Down/Off" in done.stdout, done.stderr
    assert _targets_run_on(root, "mds02", since) == {"MGS": "mds02", "scratch-MDT0000": "mds02"}
    history = _on(root, "mds02", "stonith_admin", "--history", "mds01")
    assert "reboot" in history or "off" in history, history
    with Rack.open(root, read_only=True) as rack:
        assert rack.state["targets"]["MGS"]["mounted_on"] == "mds02"
    print(json.dumps({"failover_seconds": round(time.monotonic() - crashed, 1)}))
    # The fence's reboot powered mds01 on again: it rejoins, and its targets stay on mds02.
    _pair_whole(root, "mds02", since)
    assert _placements(root, "mds02") == {"MGS": "mds02", "scratch-MDT0000": "mds02"}


def _targets_run_on(rack_root: Path, host: str, since: dict[str, int]) -> dict[str, str | None]:
    """Wait until crm_mon (asked on `host`) shows every target started there."""
    return _wait(
        f"the targets on {host}",
        lambda: (p := _placements(rack_root, host)) and set(p.values()) == {host} and p,
        timeout=240,
        explain=lambda: _explanation(rack_root, host, since),
    )


def _able(rack_root: Path, host: str) -> set[str]:
    """The servers crm_mon (asked on `host`) shows online with every health attribute above 0:
    those that may run a target now."""
    status = _on(rack_root, host, "crm_mon", "-1", "--output-as=xml", check=False)
    if not status.strip():
        return set()
    root = ET.fromstring(status)
    online = {
        n.get("name")
        for n in root.iterfind("nodes/node")
        if n.get("online") == "true" and n.get("pending") == "false"
    }
    able = set()
    for node in root.iterfind("node_attributes/node"):
        values = {a.get("name"): a.get("value") or "" for a in node.iter("attribute")}
        if all(values.get(name, "").isdigit() and int(values[name]) > 0
               for name in HEALTH_ATTRIBUTES):  # fmt: skip
            able.add(node.get("name"))
    return online & able


def _pair_whole(rack_root: Path, by: str, since: dict[str, int] | None = None) -> None:
    """Wait until both servers are in one cluster and either could take the targets."""
    _wait(
        "both servers in one cluster, each able to run the targets",
        lambda: _able(rack_root, by) == set(ADDRESSES),
        timeout=180,
        explain=lambda: _explanation(rack_root, by, since or {}),
    )


def _holder_and_partner(rack_root: Path) -> tuple[str, str]:
    """The server running the targets now (the scenarios leave them on one), and the other."""
    holder = next(iter(set(_placements(rack_root, "mds01").values())))
    return holder, ("mds01" if holder == "mds02" else "mds02")


def _online(rack_root: Path, host: str) -> set[str]:
    status = _on(rack_root, host, "crm_mon", "-1", "--output-as=xml", check=False)
    if not status.strip():
        return set()
    nodes = ET.fromstring(status).iter("node")
    return {n.get("name") for n in nodes if n.get("online") == "true" and n.get("name")}


def _fenced_since(rack_root: Path, by: str, node: str, since: float) -> bool:
    """Whether `by`'s fencing history has a successful fence of `node` completed at `since`
    (time.time()) or later. --verbose: without it stonith_admin shows one success only, the
    oldest, so a count of its lines stays at 1 once the history (synced between the nodes)
    holds an earlier scenario's fence."""
    history = _on(rack_root, by, "stonith_admin", "--history", node, "--verbose", check=False)
    completed = re.findall(r" successful: .*completed='([^']+)'", history)
    return any(
        datetime.strptime(when, "%Y-%m-%d %H:%M:%SZ").replace(tzinfo=UTC).timestamp() >= int(since)
        for when in completed
    )


def _failed_fence_levels(rack_root: Path, by: str, node: str, since: dict[str, int]) -> set[str]:
    """The fence devices of `node` ("ipmi", "pdu") that `by` tried since `since` (_log_marks)
    and that failed: its pacemaker.log's "targeting <node> using fence-<node>-<level>
    returned <rc>" with an rc other than 0."""
    log = rack_root / "hosts" / by / PACEMAKER_LOG
    with log.open("rb") as lines:
        lines.seek(since.get(by, 0))
        text = lines.read().decode(errors="replace")
    pattern = rf"targeting {node} using fence-{node}-(\w+) returned (-?\d+)"
    return {level for level, rc in re.findall(pattern, text) if int(rc) != 0}


def test_the_heartbeat_link_down_leaves_one_cluster_on_the_second_link(real_pair):
    root = real_pair["root"]
    prefix = realcluster.network.prefix_for(root)
    pulled = time.time()
    with Rack.open(root) as rack:  # `simulator inject` pulls the real cable
        failure = failures.inject(rack, "heartbeat-down", server="mds02")
    try:
        assert not realcluster.network.link_is_up(prefix, "mds02", "hb")
        links = _wait(
            "link 1 seen down",
            lambda: "disconnected" in (out := _on(root, "mds01", "corosync-cfgtool", "-s")) and out,
        )
        assert links.split("LINK ID 1")[1].count("disconnected") == 1, links
        assert links.split("LINK ID 1")[0].count("nodeid:          2:\tconnected") == 1, links
        time.sleep(10)  # longer than the token timeout (3 s): a split would show by now
        assert _online(root, "mds01") == {"mds01", "mds02"}
        assert not _fenced_since(root, "mds02", "mds01", pulled)
        assert not _fenced_since(root, "mds01", "mds02", pulled)
    finally:
        with Rack.open(root) as rack:
            failures.clear(rack, failure["id"])
    assert realcluster.network.link_is_up(prefix, "mds02", "hb")
    _wait("link 1 connected again",
          lambda: "disconnected" not in _on(root, "mds01", "corosync-cfgtool", "-s"))  # fmt: skip


def test_both_links_down_fencing_decides_and_one_server_survives(real_pair):
    root = real_pair["root"]
    prefix = realcluster.network.prefix_for(root)
    holder, other = _holder_and_partner(root)
    _pair_whole(root, other)
    cut, since = time.time(), _log_marks(root)
    for link in ("mgmt", "hb"):
        realcluster.network.set_link(prefix, holder, link, up=False)
    try:
        _wait(f"{other} fenced {holder}", lambda: _fenced_since(root, other, holder, cut),
              timeout=180, explain=lambda: _explanation(root, other, since))  # fmt: skip
        _targets_run_on(root, other, since)
        # The isolated server was powered off and on again; cut off, it may not run anything.
        with Rack.open(root, read_only=True) as rack:
            mounted = {t["label"]: t["mounted_on"] for t in rack.state["targets"].values()}
        assert set(mounted.values()) == {other}
    finally:
        for link in ("mgmt", "hb"):
            realcluster.network.set_link(prefix, holder, link, up=True)
    _pair_whole(root, other, since)


def test_with_its_bmc_unreachable_a_crashed_server_is_fenced_at_the_pdu(real_pair):
    root = real_pair["root"]
    prefix = realcluster.network.prefix_for(root)
    holder, other = _holder_and_partner(root)
    _pair_whole(root, other)
    crashed, since = time.time(), _log_marks(root)
    with Rack.open(root) as rack:
        # Its BMC out of reach, then a kernel panic: every process of the server dies.
        failures.inject(rack, "bmc-down", server=holder)
        failures.inject(rack, "server-crash", server=holder)
    try:
        assert not realcluster.network.link_is_up(prefix, holder, "bmc")
        assert realcluster.node.init_pid(root, holder) is None
        with Rack.open(root, read_only=True) as rack:
            kinds = sorted(f["kind"] for f in rack.status()["failures"].values())
        assert kinds == ["bmc-down", "server-crash"]
        _wait(f"{other} fenced {holder}", lambda: _fenced_since(root, other, holder, crashed),
              timeout=300, explain=lambda: _explanation(root, other, since))  # fmt: skip
        _targets_run_on(root, other, since)
        # The first level (IPMI) could not reach the BMC; the second (the PDU) fenced it, and
        # the PDU's reboot brought it back (else the agent fails).
        log = (root / "hosts" / other / "var/log/pacemaker/pacemaker.log").read_text()
        assert f"targeting {holder} using fence-{holder}-pdu returned 0" in log
        assert realcluster.node.init_pid(root, holder) is not None
    finally:
        with Rack.open(root) as rack:
            failures.clear(rack, None)
    assert realcluster.network.link_is_up(prefix, holder, "bmc")
    _pair_whole(root, other, since)


def test_a_crash_nobody_can_fence_moves_nothing_until_the_operator_clears_it(real_pair):
    """DESIGN §2: with the BMC and the PDU both out of reach, no fence can succeed, so the
    partner does not take the targets; `clear` powers the crashed server on through its BMC."""
    root = real_pair["root"]
    holder, other = _holder_and_partner(root)
    since = _log_marks(root)
    with Rack.open(root) as rack:
        for kind in ("bmc-down", "pdu-down", "server-crash"):
            failures.inject(rack, kind, server=holder)
    try:
        # The partner tries both levels (IPMI, then the PDU), both fail, and nothing moves.
        _wait(f"{other}'s fencing of {holder} failing at both levels",
              lambda: _failed_fence_levels(root, other, holder, since) >= {"ipmi", "pdu"},
              timeout=240, explain=lambda: _explanation(root, other, since))  # fmt: skip
        assert set(_placements(root, other).values()) <= {holder, None}
        with Rack.open(root, read_only=True) as rack:
            assert rack.state["servers"][holder]["state"] == "crashed"
            assert rack.state["servers"][holder]["power"] == "on"  # a panic: the power stays
    finally:
        with Rack.open(root) as rack:
            failures.clear(rack, None)
    _wait(f"{holder} running again", lambda: realcluster.node.init_pid(root, holder), timeout=30)
    _pair_whole(root, other, since)
    running = lambda: (p := _placements(root, other)) and None not in p.values()  # noqa: E731
    _wait("the targets running again", running, timeout=120,
          explain=lambda: _explanation(root, other, since))  # fmt: skip


def test_a_real_pair_needs_its_addresses_on_the_racks_two_networks(tmp_path):
    plan = real_plan()
    plan["servers"][1]["heartbeat_address"] = "10.31.0.2"
    with Rack.open(tmp_path / "rack", create=True) as rack:
        rack.add(plan)
        with pytest.raises(
            RackError, match=r"servers\[1\]\.heartbeat_address: 10\.31\.0\.2 is not"
        ):
            realcluster.mark_real(rack.state, "mds01")
        assert not realcluster.is_real(rack.state, "mds01")
        rack.state["servers"]["mds02"]["heartbeat_address"] = "169.254.2.2"
        realcluster.mark_real(rack.state, "mds01")
        assert realcluster.is_real(rack.state, "mds01")
