"""A pair that cannot be fenced gets no Pacemaker configuration at all.

A node that cannot be fenced is never assumed dead (DESIGN.md §2), so such a cluster would not
fail over; better to refuse it, naming the server and the field, than to write it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from provisioning.ha import FenceCredentials, HAConfigError, build_cib, build_pcs_script

PLANS = Path(__file__).parent / "plans"


@pytest.fixture
def plan() -> dict:
    return json.loads((PLANS / "oss_pair_24_osts.json").read_text())


@pytest.mark.parametrize("build", [build_cib, build_pcs_script])
@pytest.mark.parametrize("missing", [None, "", "drop"])
def test_server_without_bmc_is_refused(plan, build, missing):
    if missing == "drop":
        del plan["servers"][1]["bmc"]
    else:
        plan["servers"][1]["bmc"] = missing
    with pytest.raises(HAConfigError) as refused:
        build(plan)
    assert refused.value.field == "servers[1].bmc"
    assert "oss02" in str(refused.value)


@pytest.mark.parametrize("build", [build_cib, build_pcs_script])
@pytest.mark.parametrize("missing", [None, "", "drop"])
def test_server_without_pdu_outlet_is_refused(plan, build, missing):
    if missing == "drop":
        del plan["servers"][0]["pdu_outlet"]
    else:
        plan["servers"][0]["pdu_outlet"] = missing
    with pytest.raises(HAConfigError) as refused:
        build(plan)
    assert refused.value.field == "servers[0].pdu_outlet"
    assert "oss01" in str(refused.value)


@pytest.mark.parametrize("outlet", ["pdu1", "pdu1:", ":3", "pdu1:0", "pdu1:x", "pdu 1:3", "p;d:3"])
def test_unreadable_pdu_outlet_is_refused(plan, outlet):
    plan["servers"][0]["pdu_outlet"] = outlet
    with pytest.raises(HAConfigError) as refused:
        build_cib(plan)
    assert refused.value.field == "servers[0].pdu_outlet"


@pytest.mark.parametrize("switch", ["fencing", "stonith_enabled", "stonith-enabled"])
@pytest.mark.parametrize("value", [False, "false", 0, None])
def test_plan_asking_for_fencing_off_is_refused(plan, switch, value):
    plan[switch] = value
    with pytest.raises(HAConfigError) as refused:
        build_cib(plan)
    assert refused.value.field == f"plan.{switch}"


def test_plan_saying_fencing_on_is_accepted(plan):
    plan["fencing"] = True
    assert 'name="stonith-enabled" value="true"' in build_cib(plan)


def test_turning_fencing_off_through_the_credentials_is_refused(plan):
    with pytest.raises(HAConfigError) as refused:
        build_cib(plan, fence_credentials=False)
    assert refused.value.field == "fence_credentials"


def test_no_fencing_option_exists(plan):
    # There is no keyword to turn fencing off; an attempt fails loudly rather than silently.
    with pytest.raises(TypeError):
        build_cib(plan, fencing=False)  # type: ignore[call-arg]


def test_every_fenced_node_has_two_levels_and_devices_kept_off_it(plan):
    # The positive side: what a complete plan gets.
    import xml.etree.ElementTree as ET

    root = ET.fromstring(build_cib(plan))
    levels = {
        (level.get("target"), level.get("index")): level.get("devices")
        for level in root.iter("fencing-level")
    }
    assert levels == {
        ("oss01", "1"): "fence-oss01-ipmi",
        ("oss01", "2"): "fence-oss01-pdu",
        ("oss02", "1"): "fence-oss02-ipmi",
        ("oss02", "2"): "fence-oss02-pdu",
    }
    bans = {
        (location.get("rsc"), location.get("node"))
        for location in root.iter("rsc_location")
        if location.get("score") == "-INFINITY"
    }
    assert bans == {(device, device.split("-")[1]) for device in levels.values()}


def test_credentials_with_a_password_are_refused(plan):
    with pytest.raises(HAConfigError) as refused:
        build_cib(plan, {"ipmi_username": "admin", "ipmi_password": "hunter2"})
    assert refused.value.field == "fence_credentials.ipmi_password"
    assert "hunter2" not in str(refused.value)


def test_credentials_name_the_fence_users(plan):
    cib = build_cib(plan, FenceCredentials(ipmi_username="fenceadm", pdu_username="pdufence"))
    assert 'name="username" value="fenceadm"' in cib
    assert 'name="username" value="pdufence"' in cib


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("servers", 0, "hostname"), "oss01;reboot"),
        (("servers", 0, "hostname"), "OSS01"),
        (("servers", 1, "nids"), ["10.10.0.12"]),
        (("servers", 1, "bmc"), "10.20.0.12 && true"),
        (("targets", 3, "label"), "scratch-OST0003 x"),
        (("targets", 3, "label"), "other-OST0003"),
        (("targets", 3, "device"), "/dev/mapper/$(id)"),
        (("targets", 3, "mountpoint"), "relative/path"),
        (("targets", 3, "primary"), "oss09"),
        (("targets", 3, "failover"), "oss02"),
        (("targets", 3, "kind"), "DATA"),
        (("filesystem",), "scratch-fs"),
    ],
)
def test_names_that_could_break_ids_or_commands_are_refused(plan, path, value):
    broken = copy.deepcopy(plan)
    where = broken
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    with pytest.raises(HAConfigError) as refused:
        build_cib(broken)
    expected = ".".join(str(key) for key in path)
    expected = expected.replace("servers.0", "servers[0]").replace("servers.1", "servers[1]")
    expected = expected.replace("targets.3", "targets[3]")
    if path == ("filesystem",):
        expected = "plan.filesystem"
    assert refused.value.field == expected
