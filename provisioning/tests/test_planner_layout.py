"""The planned layout of the reference hardware: drawers, controllers, servers, labels."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from provisioning.planner import MODELS, make_plan

SPECS = Path(__file__).parent / "specs"

CONTRACT_KEYS = {
    "filesystem", "ssu", "role", "servers", "raid", "segment_kib", "arrays", "capacity",
    "volume_groups", "targets", "spares", "expected_bandwidth_mb_s",
}  # fmt: skip


def load(name: str) -> dict:
    return json.loads((SPECS / name).read_text())


@pytest.fixture(scope="module")
def reference_plan() -> dict:
    return make_plan(load("reference_ssu.json"))


@pytest.mark.parametrize("name", sorted(path.name for path in SPECS.glob("*.json")))
def test_every_example_spec_plans_into_the_agreed_json_shape(name):
    plan = make_plan(load(name))
    assert CONTRACT_KEYS <= plan.keys()
    assert json.loads(json.dumps(plan)) == plan
    assert [server["hostname"] for server in plan["servers"]] == [
        server["hostname"] for server in load(name)["servers"]
    ]
    assert set(plan["capacity"]) >= {"raw_tb", "usable_tb", "drives", "data_drives", "spares"}
    assert set(plan["expected_bandwidth_mb_s"]) >= {"total", "per_server"}
    for array in plan["arrays"]:
        assert {"name", "controller", "expansions", "drive_tb", "enclosures"} <= array.keys()
        for enclosure in array["enclosures"]:
            assert {"id", "model", "drawers", "slots_per_drawer"} <= enclosure.keys()
    for group in plan["volume_groups"]:
        assert {"name", "array", "raid", "segment_kib", "controller", "drives"} <= group.keys()
        for drive in group["drives"]:
            assert set(drive) == {"enclosure", "drawer", "slot"}
    for target in plan["targets"]:
        assert {
            "label", "index", "kind", "volume_group", "primary", "failover", "controller",
            "device", "mountpoint",
        } <= target.keys()  # fmt: skip
    for spare in plan["spares"]:
        assert {"enclosure", "drawer", "slot"} <= spare.keys()


def test_reference_ssu_has_24_osts_12_served_by_each_oss(reference_plan):
    targets = reference_plan["targets"]
    assert len(targets) == 24
    assert Counter(target["primary"] for target in targets) == {"oss01": 12, "oss02": 12}
    assert all({target["primary"], target["failover"]} == {"oss01", "oss02"} for target in targets)


def test_reference_ssu_volume_groups_take_two_drives_from_each_of_five_drawers(reference_plan):
    groups = reference_plan["volume_groups"]
    assert len(groups) == 24
    for group in groups:
        enclosures = {drive["enclosure"] for drive in group["drives"]}
        assert len(enclosures) == 1
        per_drawer = Counter(drive["drawer"] for drive in group["drives"])
        assert per_drawer == {1: 2, 2: 2, 3: 2, 4: 2, 5: 2}
        assert group["survives_drawer_loss"] is True


def test_sixty_drives_make_six_volume_groups_per_enclosure(reference_plan):
    per_enclosure = Counter(group["enclosure"] for group in reference_plan["volume_groups"])
    assert per_enclosure == {
        "ssu01-a-e0": 6, "ssu01-a-e1": 6, "ssu01-b-e0": 6, "ssu01-b-e1": 6,
    }  # fmt: skip


def test_ost_labels_are_lowercase_hex_with_devices_and_mountpoints(reference_plan):
    target = reference_plan["targets"][10]
    assert target == {
        "label": "scratch-OST000a",
        "index": 10,
        "kind": "OST",
        "volume_group": "ssu01-a-vg10",
        "primary": "oss01",
        "failover": "oss02",
        "controller": "A",
        "device": "/dev/mapper/scratch-OST000a",
        "mountpoint": "/mnt/lustre/scratch-OST000a",
        "array": "ssu01-a",
    }


def test_odd_and_even_osts_prefer_different_servers(reference_plan):
    for target in reference_plan["targets"]:
        assert target["primary"] == ("oss01" if target["index"] % 2 == 0 else "oss02")


def test_controllers_alternate_per_volume_group_and_split_evenly(reference_plan):
    groups = reference_plan["volume_groups"]
    assert [group["controller"] for group in groups[:4]] == ["A", "B", "A", "B"]
    assert Counter(group["controller"] for group in groups) == {"A": 12, "B": 12}
    for target in reference_plan["targets"]:
        group = next(g for g in groups if g["name"] == target["volume_group"])
        assert target["controller"] == group["controller"]


def test_ost_indices_continue_from_first_ost_index():
    spec = load("reference_ssu.json")
    spec["first_ost_index"] = 25
    targets = make_plan(spec)["targets"]
    assert [target["index"] for target in targets] == list(range(25, 49))
    assert targets[0]["label"] == "scratch-OST0019"
    # Index 25 is odd, so it prefers the second server.
    assert targets[0]["primary"] == "oss02"


def test_mds_pair_puts_mgt_and_mdt_on_one_raid10_group_active_passive():
    plan = make_plan(load("mds_pair.json"))
    (group,) = plan["volume_groups"]
    assert group["raid"] == "10" and len(group["drives"]) == 24
    assert group["segment_kib"] == 128
    mgt, mdt = plan["targets"]
    assert mgt == {
        "label": "MGS",
        "index": 0,
        "kind": "MGT",
        "volume_group": "mds01-a-vg00",
        "primary": "mds01",
        "failover": "mds02",
        "controller": "A",
        "device": "/dev/mapper/scratch-MGT",
        "mountpoint": "/mnt/lustre/scratch-MGT",
        "array": "mds01-a",
    }
    assert mdt["label"] == "scratch-MDT0000" and mdt["kind"] == "MDT"
    assert mdt["volume_group"] == group["name"]
    assert (mdt["primary"], mdt["failover"]) == ("mds01", "mds02")
    assert mdt["device"] == "/dev/mapper/scratch-MDT0000"


def test_mds_pair_accepts_pair_as_the_unit_name_and_a_first_mdt_index():
    spec = load("mds_pair.json")
    spec["pair"] = spec.pop("ssu")
    spec["first_mdt_index"] = 1
    plan = make_plan(spec)
    assert plan["ssu"] == "mds01"
    assert [target["label"] for target in plan["targets"]] == ["MGS", "scratch-MDT0001"]


def test_mds_raid_defaults_to_raid10():
    spec = load("mds_pair.json")
    del spec["raid"]
    assert make_plan(spec)["raid"] == "10"


def test_raid10_mirror_partners_sit_in_different_drawers_when_there_are_drawers():
    spec = load("mds_pair.json")
    spec["arrays"] = [{"name": "mds01-a", "controller": "E5560", "drive_tb": 1.2, "drives": 48}]
    plan = make_plan(spec)
    assert len(plan["volume_groups"]) == 2
    for group in plan["volume_groups"]:
        drives = group["drives"]
        for first, second in zip(drives[0::2], drives[1::2], strict=True):
            assert first["drawer"] != second["drawer"]
        assert group["survives_drawer_loss"] is True


def test_me4084_spreads_groups_five_and_five_and_keeps_spares_at_the_drawer_ends():
    plan = make_plan(load("me4084_ssu.json"))
    groups = [g for g in plan["volume_groups"] if g["array"] == "ssu02-a"]
    assert len(groups) == 8
    for group in groups:
        assert Counter(drive["drawer"] for drive in group["drives"]) == {1: 5, 2: 5}
        # Two drawers cannot give an 8+2 group drawer-loss protection; the plan says so.
        assert group["survives_drawer_loss"] is False
    spares = [(s["drawer"], s["slot"]) for s in plan["spares"] if s["array"] == "ssu02-a"]
    assert sorted(spares) == [(1, 41), (1, 42), (2, 41), (2, 42)]


def test_partly_filled_expansion_spreads_its_drives_evenly_over_the_drawers():
    spec = load("reference_ssu.json")
    spec["arrays"] = spec["arrays"][:1]
    spec["arrays"][0]["drives"] = 100
    plan = make_plan(spec)
    array = plan["arrays"][0]
    assert [enclosure["drives"] for enclosure in array["enclosures"]] == [60, 40]
    expansion_groups = [g for g in plan["volume_groups"] if g["enclosure"] == "ssu01-a-e1"]
    assert len(expansion_groups) == 4
    used = {(d["drawer"], d["slot"]) for g in expansion_groups for d in g["drives"]}
    assert used == {(drawer, slot) for drawer in range(1, 6) for slot in range(1, 9)}


def test_ten_spares_take_two_drives_from_each_drawer_of_one_enclosure():
    spec = load("reference_ssu.json")
    spec["arrays"][0]["global_spares"] = 10
    plan = make_plan(spec)
    spares = [s for s in plan["spares"] if s["array"] == "ssu01-a"]
    assert len(spares) == 10
    assert len({s["enclosure"] for s in spares}) == 1
    assert Counter(s["drawer"] for s in spares) == {1: 2, 2: 2, 3: 2, 4: 2, 5: 2}
    assert len(plan["targets"]) == 23


def test_controller_split_stays_even_across_arrays_with_odd_group_counts():
    spec = load("reference_ssu.json")
    spec["arrays"] = [
        {"name": f"ssu01-{letter}", "controller": "E5560", "drive_tb": 4, "drives": 30}
        for letter in "abc"
    ]
    groups = make_plan(spec)["volume_groups"]
    assert [group["controller"] for group in groups] == [
        "A",
        "B",
        "A",
        "B",
        "A",
        "B",
        "A",
        "B",
        "A",
    ]


def test_failover_map_lists_normal_targets_and_everything_after_partner_failure(reference_plan):
    failover_map = reference_plan["failover_map"]
    labels = [target["label"] for target in reference_plan["targets"]]
    assert failover_map["oss01"]["normal"] == labels[0::2]
    assert failover_map["oss02"]["normal"] == labels[1::2]
    assert failover_map["oss01"]["after_partner_failure"] == labels


def test_catalogue_has_one_entry_per_model_with_its_drive_count():
    assert {name: model.drives for name, model in MODELS.items()} == {
        "E5560": 60, "DE6600": 60, "MD3460": 60, "MD3060e": 60, "E2724": 24,
        "ME4084": 84, "ME484": 84,
    }  # fmt: skip
    assert MODELS["E2724"].drawers == 1
    assert MODELS["ME4084"].drawers == 2
    assert all(MODELS[name].controllers == ("A", "B") for name in ("E5560", "MD3460", "E2724"))


def test_md3460_with_md3060e_plans_like_e5560_with_de6600():
    spec = load("reference_ssu.json")
    dell = json.loads(json.dumps(spec))
    for array in dell["arrays"]:
        array["controller"], array["expansions"] = "MD3460", ["MD3060e"]
    plan, dell_plan = make_plan(spec), make_plan(dell)
    assert dell_plan["volume_groups"] == plan["volume_groups"]
    assert dell_plan["targets"] == plan["targets"]
