"""A spec the planner cannot build is refused whole, with each problem named by its field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provisioning.planner import SpecError, make_plan

SPECS = Path(__file__).parent / "specs"


def reference_spec() -> dict:
    return json.loads((SPECS / "reference_ssu.json").read_text())


def errors_of(spec: dict) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        make_plan(spec)
    return caught.value.errors


def only_error(spec: dict) -> tuple[str, str]:
    errors = errors_of(spec)
    assert len(errors) == 1, errors
    return next(iter(errors.items()))


# -- enclosure models --------------------------------------------------------------------------


def test_unknown_controller_model_is_named_with_the_known_ones():
    spec = reference_spec()
    spec["arrays"][0]["controller"] = "E9999"
    field, message = only_error(spec)
    assert field == "arrays[0].controller"
    assert "unknown enclosure model 'E9999'" in message
    assert "E5560" in message


def test_unknown_expansion_model_is_refused():
    spec = reference_spec()
    spec["arrays"][1]["expansions"] = ["DE6600", "DE9999"]
    field, message = only_error(spec)
    assert field == "arrays[1].expansions[1]"
    assert "unknown enclosure model 'DE9999'" in message


def test_expansion_model_cannot_be_the_controller():
    spec = reference_spec()
    spec["arrays"][0]["controller"] = "DE6600"
    spec["arrays"][0]["expansions"] = []
    field, message = only_error(spec)
    assert field == "arrays[0].controller"
    assert "DE6600 is an expansion enclosure without RAID controllers" in message


def test_controller_model_cannot_be_an_expansion():
    spec = reference_spec()
    spec["arrays"][0]["expansions"] = ["E5560"]
    field, message = only_error(spec)
    assert field == "arrays[0].expansions[0]"
    assert "E5560 is a controller enclosure" in message
    assert "DE6600" in message


def test_expansion_of_another_family_cannot_be_attached():
    spec = reference_spec()
    spec["arrays"][0] = {"name": "ssu01-a", "controller": "ME4084", "drive_tb": 4}
    spec["arrays"][0]["expansions"] = ["DE6600"]
    field, message = only_error(spec)
    assert field == "arrays[0].expansions[0]"
    assert "DE6600 (E-Series) cannot be attached to ME4084" in message
    assert "ME484" in message


def test_more_enclosures_than_the_controller_can_run_are_refused():
    spec = reference_spec()
    spec["arrays"][0] = {
        "name": "ssu01-a",
        "controller": "MD3460",
        "expansions": ["MD3060e"] * 3,
        "drive_tb": 4,
    }
    field, message = only_error(spec)
    assert field == "arrays[0].expansions"
    assert "MD3460 runs at most 180 drives; these enclosures hold 240" in message


# -- drive counts and spares -------------------------------------------------------------------


def test_installed_drives_that_fill_no_group_are_an_error():
    spec = reference_spec()
    spec["arrays"][0]["drives"] = 115  # 60 + 55: five drives too many for 5 groups of 10
    field, message = only_error(spec)
    assert field == "arrays[0].drives"
    assert "5 drive(s) would be left unused (neither in a volume group nor a spare)" in message
    assert "global_spares that work here: 5, 15, 25" in message


def test_spares_that_break_whole_groups_are_an_error():
    spec = reference_spec()
    spec["arrays"][1]["global_spares"] = 2
    field, message = only_error(spec)
    assert field == "arrays[1].global_spares"
    assert "8 drive(s) would be left unused" in message
    assert "0, 10, 20" in message


def test_me4084_without_its_four_spares_leaves_drives_unused():
    spec = reference_spec()
    spec["arrays"] = [
        {"name": "ssu01-a", "controller": "ME4084", "drive_tb": 4, "global_spares": 0}
    ]
    field, message = only_error(spec)
    assert field == "arrays[0].global_spares"
    assert "4 drive(s) would be left unused" in message
    assert "global_spares that work here: 4, 14" in message


def test_e2724_for_osts_needs_its_four_leftover_drives_declared():
    spec = reference_spec()
    spec["arrays"] = [{"name": "ssu01-a", "controller": "E2724", "drive_tb": 2}]
    field, message = only_error(spec)
    assert field == "arrays[0].global_spares"
    assert "4 drive(s) would be left unused" in message


def test_more_spares_than_drives_is_an_error():
    spec = reference_spec()
    spec["arrays"][0]["global_spares"] = 121
    field, message = only_error(spec)
    assert field == "arrays[0].global_spares"
    assert "121 global spares requested but the array holds only 120 drives" in message


def test_spares_that_leave_no_volume_group_are_an_error():
    spec = reference_spec()
    spec["arrays"][0]["global_spares"] = 120
    field, message = only_error(spec)
    assert field == "arrays[0].global_spares"
    assert "no volume group would be left" in message


def test_more_drives_than_slots_is_an_error():
    spec = reference_spec()
    spec["arrays"][0]["drives"] = 121
    field, message = only_error(spec)
    assert field == "arrays[0].drives"
    assert "121 is out of range: must be 1 to 120" in message


@pytest.mark.parametrize("drive_tb", [0, -4, "4", True, None])
def test_drive_size_must_be_a_positive_number(drive_tb):
    spec = reference_spec()
    spec["arrays"][0]["drive_tb"] = drive_tb
    field, message = only_error(spec)
    assert field == "arrays[0].drive_tb"
    assert "must be > 0" in message or "must be a number" in message


# -- servers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 3])
def test_a_pair_has_exactly_two_servers(count):
    spec = reference_spec()
    server = spec["servers"][0]
    spec["servers"] = [
        {
            **server,
            "hostname": f"oss{number}",
            "nids": [f"10.10.0.{number}@o2ib"],
            "bmc": f"10.20.0.{number}",
            "pdu_outlet": f"pdu1:{number}",
        }
        for number in range(1, count + 1)
    ]
    field, message = only_error(spec)
    assert field == "servers"
    assert f"exactly 2 servers (primary and failover); got {count}" in message


def test_duplicate_hostnames_are_refused():
    spec = reference_spec()
    spec["servers"][1]["hostname"] = "oss01"
    field, message = only_error(spec)
    assert field == "servers[1].hostname"
    assert "'oss01' duplicates servers[0].hostname" in message


@pytest.mark.parametrize(
    "hostname",
    [
        "OSS01",  # upper case
        "oss_01",  # underscore
        "-oss01",  # leading hyphen
        "oss01-",  # trailing hyphen
        "oss..01",  # empty label
        "a" * 64,  # label too long
        ".".join(["a" * 63] * 4) + ".b",  # 257 characters in all
        "",
    ],
)
def test_malformed_hostnames_are_refused(hostname):
    spec = reference_spec()
    spec["servers"][0]["hostname"] = hostname
    field, message = only_error(spec)
    assert field == "servers[0].hostname"
    assert any(
        reason in message
        for reason in ("not a valid host name", "at most 63", "at most 253", "is empty")
    )


def test_longest_valid_hostname_is_accepted():
    spec = reference_spec()
    spec["servers"][0]["hostname"] = ".".join(["a" * 63] * 3 + ["b" * 61])  # 253 characters
    assert make_plan(spec)["targets"][0]["primary"] == spec["servers"][0]["hostname"]


@pytest.mark.parametrize(
    ("nid", "reason"),
    [
        ("10.10.0.11", "expected <IPv4>@<network>"),
        ("10.10.0.256@o2ib", "octet 256 is above 255"),
        ("10.10.0@o2ib", "not an IPv4 address"),
        ("10.10.0.011@o2ib", "octet 011 has a leading zero"),
        ("10.10.0.11@ib0", "the network must be one of tcp, o2ib, kfi, gni, ptl4"),
        ("10.10.0.11@o2ib01", "the network must be one of"),
        ("10.10.0.11@tcp65536", "the network must be one of"),
        ("oss01@tcp", "not an IPv4 address"),
    ],
)
def test_malformed_nids_are_refused(nid, reason):
    spec = reference_spec()
    spec["servers"][0]["nids"] = [nid]
    spec["servers"][1]["nids"] = ["10.10.0.12@o2ib", "10.10.1.12@tcp"]
    field, message = only_error(spec)
    assert field == "servers[0].nids[0]"
    assert reason in message


@pytest.mark.parametrize(
    "nid", ["10.10.0.11@tcp", "10.10.0.11@o2ib1", "10.1.2.3@kfi", "0.0.0.0@gni2", "1.2.3.4@ptl4"]
)
def test_wellformed_nids_of_each_network_type_are_accepted(nid):
    spec = reference_spec()
    spec["servers"][0]["nids"] = [nid]
    spec["servers"][1]["nids"] = ["10.10.0.12@" + nid.partition("@")[2]]
    assert make_plan(spec)["servers"][0]["nids"] == [nid]


def test_the_same_nid_on_both_servers_is_refused():
    spec = reference_spec()
    spec["servers"][1]["nids"] = ["10.10.0.11@o2ib0"]  # o2ib and o2ib0 are one network
    field, message = only_error(spec)
    assert field == "servers[1].nids[0]"
    assert "'10.10.0.11@o2ib0' is the same NID as servers[0].nids[0]" in message


def test_a_nid_listed_twice_on_one_server_is_refused():
    spec = reference_spec()
    spec["servers"][0]["nids"] = ["10.10.0.11@o2ib", "10.10.0.11@o2ib"]
    field, message = only_error(spec)
    assert field == "servers[0].nids[1]"
    assert "same NID as servers[0].nids[0]" in message


def test_servers_without_a_common_lnet_network_are_refused():
    spec = reference_spec()
    spec["servers"][1]["nids"] = ["10.10.0.12@tcp"]
    field, message = only_error(spec)
    assert field == "servers[1].nids"
    assert "no LNet network in common with servers[0] (o2ib0)" in message


@pytest.mark.parametrize("bmc", ["10.20.0.300", "bmc_oss01", "10.20.0", ""])
def test_bmc_must_be_an_ipv4_address_or_a_hostname(bmc):
    spec = reference_spec()
    spec["servers"][0]["bmc"] = bmc
    field, message = only_error(spec)
    assert field == "servers[0].bmc"
    assert "IPv4" in message or "host name" in message


def test_bmc_may_be_a_hostname():
    spec = reference_spec()
    spec["servers"][0]["bmc"] = "oss01-bmc.mgmt"
    assert make_plan(spec)["servers"][0]["bmc"] == "oss01-bmc.mgmt"


def test_one_bmc_for_both_servers_is_refused():
    spec = reference_spec()
    spec["servers"][1]["bmc"] = spec["servers"][0]["bmc"]
    field, message = only_error(spec)
    assert field == "servers[1].bmc"
    assert "one BMC cannot fence two servers" in message


@pytest.mark.parametrize(
    "outlet", ["pdu1", "pdu1:", ":3", "pdu1:0", "pdu1:03", "pdu_1:3", "p:1000"]
)
def test_pdu_outlet_must_be_pdu_name_and_outlet_number(outlet):
    spec = reference_spec()
    spec["servers"][0]["pdu_outlet"] = outlet
    field, message = only_error(spec)
    assert field == "servers[0].pdu_outlet"
    assert "PDU outlet" in message or "outlet number" in message or "PDU" in message


def test_the_same_pdu_outlet_for_both_servers_is_refused():
    spec = reference_spec()
    spec["servers"][1]["pdu_outlet"] = spec["servers"][0]["pdu_outlet"]
    field, message = only_error(spec)
    assert field == "servers[1].pdu_outlet"
    assert "fencing one server would cut the power of both" in message


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("filesystem", ["", "scratch99", "Scratch", "scr-tch", "scr.tch", 7])
def test_filesystem_names_lustre_refuses_are_refused(filesystem):
    spec = reference_spec()
    spec["filesystem"] = filesystem
    field, message = only_error(spec)
    assert field == "filesystem"
    assert "1 to 8 characters of a-z, 0-9 and _" in message or "must be a string" in message


def test_filesystem_name_of_eight_characters_with_underscore_is_accepted():
    spec = reference_spec()
    spec["filesystem"] = "lus_tre8"
    assert make_plan(spec)["targets"][0]["label"] == "lus_tre8-OST0000"


@pytest.mark.parametrize("name", ["SSU01", "1ssu", "ssu_01", "ssu 01", "ssu;rm", "s" * 33, ""])
def test_unsafe_ssu_names_are_refused(name):
    spec = reference_spec()
    spec["ssu"] = name
    field, message = only_error(spec)
    assert field == "ssu"
    assert "is not a safe name: start with a lowercase letter" in message


@pytest.mark.parametrize("name", ["ssu01_a", "A", "ssu01-a$", "-a"])
def test_unsafe_array_names_are_refused(name):
    spec = reference_spec()
    spec["arrays"][0]["name"] = name
    field, message = only_error(spec)
    assert field == "arrays[0].name"
    assert "is not a safe name" in message


def test_duplicate_array_names_are_refused():
    spec = reference_spec()
    spec["arrays"][1]["name"] = "ssu01-a"
    field, message = only_error(spec)
    assert field == "arrays[1].name"
    assert "'ssu01-a' duplicates arrays[0].name" in message


def test_ssu_and_its_pair_alias_together_are_refused():
    spec = reference_spec()
    spec["pair"] = "ssu01"
    field, message = only_error(spec)
    assert field == "pair"
    assert "either ssu or pair" in message


# -- RAID, segment and indices -----------------------------------------------------------------


@pytest.mark.parametrize(("role", "raid"), [("oss", "6"), ("oss", "10"), ("mds", "8+2")])
def test_unsupported_raid_for_the_role_is_refused(role, raid):
    spec = reference_spec()
    spec["role"], spec["raid"] = role, raid
    field, message = only_error(spec)
    assert field == "raid"
    assert f"RAID '{raid}' is not supported for role {role}" in message


@pytest.mark.parametrize("segment_kib", [64, 1024, 100, "128"])
def test_unsupported_segment_sizes_are_refused(segment_kib):
    spec = reference_spec()
    spec["segment_kib"] = segment_kib
    field, message = only_error(spec)
    assert field == "segment_kib"
    assert "use one of: 128, 256, 512" in message or "must be a whole number" in message


@pytest.mark.parametrize(("first", "reason"), [(-1, "out of range"), (70000, "out of range")])
def test_first_ost_index_must_be_a_lustre_index(first, reason):
    spec = reference_spec()
    spec["first_ost_index"] = first
    field, message = only_error(spec)
    assert field == "first_ost_index"
    assert reason in message and "65535" in message


def test_ost_indices_must_all_fit_below_the_lustre_maximum():
    spec = reference_spec()
    spec["first_ost_index"] = 65530
    field, message = only_error(spec)
    assert field == "first_ost_index"
    assert "24 OSTs from index 65530 would end at 65553" in message
    assert "highest OST index is 65535" in message


def test_ost_indices_ending_exactly_at_the_maximum_are_accepted():
    spec = reference_spec()
    spec["first_ost_index"] = 65535 - 23
    assert make_plan(spec)["targets"][-1]["label"] == "scratch-OSTffff"


def test_boolean_index_is_refused():
    spec = reference_spec()
    spec["first_ost_index"] = True
    field, message = only_error(spec)
    assert field == "first_ost_index"
    assert "must be a whole number, not a boolean" in message


# -- shape of the spec -------------------------------------------------------------------------


def test_unknown_fields_are_refused_so_typos_do_not_pass_silently():
    spec = reference_spec()
    spec["arrays"][0]["global_spare"] = 10
    field, message = only_error(spec)
    assert field == "arrays[0].global_spare"
    assert "unknown field" in message and "global_spares" in message


def test_missing_required_fields_are_named():
    errors = errors_of({"role": "oss"})
    assert errors == {
        "arrays": "is required",
        "filesystem": "is required",
        "servers": "is required",
        "ssu": "is required (for an MDS pair, `pair` is accepted instead)",
    }


def test_a_spec_that_is_not_an_object_is_refused():
    assert errors_of(["not", "a", "spec"]) == {"spec": "must be a JSON object"}


def test_every_problem_is_reported_at_once():
    spec = reference_spec()
    spec["filesystem"] = "way_too_long"
    spec["servers"][1]["hostname"] = "oss01"
    spec["servers"][0]["nids"] = ["10.0.0.300@o2ib"]
    spec["arrays"][0]["controller"] = "DE6600"
    spec["arrays"][1]["global_spares"] = 3
    spec["segment_kib"] = 64
    errors = errors_of(spec)
    assert set(errors) == {
        "filesystem",
        "servers[1].hostname",
        "servers[0].nids[0]",
        "arrays[0].controller",
        "arrays[1].global_spares",
        "segment_kib",
    }


def test_str_of_spec_error_lists_one_field_per_line():
    spec = reference_spec()
    spec["filesystem"] = "BAD"
    spec["servers"][1]["hostname"] = "oss01"
    with pytest.raises(SpecError) as caught:
        make_plan(spec)
    lines = str(caught.value).splitlines()
    assert [line.split(":", 1)[0] for line in lines] == ["filesystem", "servers[1].hostname"]


def test_the_spec_is_not_changed_by_planning():
    spec = reference_spec()
    before = copy.deepcopy(spec)
    make_plan(spec)
    assert spec == before


# -- robustness --------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)


def field_paths(spec: dict) -> list[tuple]:
    paths: list[tuple] = [(key,) for key in spec]
    for key in ("servers", "arrays"):
        for index, entry in enumerate(spec[key]):
            paths += [(key, index, field) for field in entry]
            for field in ("nids", "expansions"):
                paths += [(key, index, field, item) for item in range(len(entry.get(field, [])))]
    return paths


@settings(max_examples=100, deadline=None)
@given(st.data(), JSON_VALUES)
def test_any_value_in_any_field_gives_a_plan_or_a_spec_error(data, value):
    spec = reference_spec()
    path = data.draw(st.sampled_from(field_paths(spec)))
    parent = spec
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    try:
        plan = make_plan(spec)
    except SpecError as problem:
        assert problem.errors
        assert all(isinstance(message, str) and message for message in problem.errors.values())
    else:
        assert json.loads(json.dumps(plan)) == plan


def test_lnet_interface_is_optional_and_echoed_into_the_plan():
    spec = reference_spec()
    for server in spec["servers"]:
        server["lnet_interface"] = "ib1"
    plan = make_plan(spec)
    assert [server["lnet_interface"] for server in plan["servers"]] == ["ib1", "ib1"]
    assert "lnet_interface" not in make_plan(reference_spec())["servers"][0]


@pytest.mark.parametrize("interface", ["ib 0", "1ib", "eth0;reboot", "a" * 16])
def test_malformed_lnet_interface_is_refused(interface):
    spec = reference_spec()
    spec["servers"][0]["lnet_interface"] = interface
    field, message = only_error(spec)
    assert field == "servers[0].lnet_interface"
    assert "is not a network interface name" in message


def test_different_lnet_interfaces_on_the_two_servers_are_refused():
    spec = reference_spec()
    spec["servers"][0]["lnet_interface"] = "ib0"
    spec["servers"][1]["lnet_interface"] = "ib1"
    field, message = only_error(spec)
    assert field == "servers[1].lnet_interface"
    assert "differs from servers[0] (ib0)" in message
