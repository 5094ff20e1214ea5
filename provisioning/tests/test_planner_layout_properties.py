"""Layout guarantees that hold for every valid spec, checked over random hardware mixes."""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provisioning.planner import MODELS, SpecError, make_plan

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SERVERS = [
    {"hostname": "oss01", "nids": ["10.10.0.11@o2ib"], "bmc": "10.20.0.11", "pdu_outlet": "pdu1:3"},
    {"hostname": "oss02", "nids": ["10.10.0.12@o2ib"], "bmc": "10.20.0.12", "pdu_outlet": "pdu2:3"},
]  # fmt: skip
# Controller models and the expansions of their family, with how many the controller can run.
FAMILIES = {
    "E5560": ("DE6600", 5),
    "MD3460": ("MD3060e", 2),
    "ME4084": ("ME484", 3),
    "E2724": ("DE6600", 2),
}
GROUP_DRIVES = {"oss": 10, "mds": 24}


def fill_in_order(models: list[str], drives: int) -> list[int]:
    counts = []
    for model in models:
        counts.append(min(drives, MODELS[model].drives))
        drives -= counts[-1]
    return counts


@st.composite
def arrays(draw: st.DrawFn, role: str, name: str) -> dict:
    width = GROUP_DRIVES[role]
    controller = draw(st.sampled_from(sorted(FAMILIES)))
    expansion, most = FAMILIES[controller]
    models = [controller] + [expansion] * draw(st.integers(0, most))
    slots = sum(MODELS[model].drives for model in models)
    drives = draw(st.one_of(st.just(slots), st.integers(width, slots)))
    counts = fill_in_order(models, drives)
    # The spare counts that leave whole groups in every enclosure: the remainders, plus
    # whole groups' worth, while at least one group is left.
    remainders = sum(count % width for count in counts)
    groups = sum(count // width for count in counts)
    spares = remainders + width * draw(st.integers(0, min(groups - 1, 2)))
    array = {
        "name": name,
        "controller": controller,
        "expansions": models[1:],
        "drive_tb": draw(st.sampled_from([1.2, 3, 4, 6, 8, 10.5, 18])),
        "global_spares": spares,
    }
    if drives != slots:
        array["drives"] = drives
    return array


@st.composite
def valid_specs(draw: st.DrawFn, role: str | None = None) -> dict:
    role = role or draw(st.sampled_from(["oss", "oss", "oss", "mds"]))
    count = draw(st.integers(1, 4))
    spec = {
        "filesystem": draw(st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)),
        "ssu": draw(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)),
        "role": role,
        "servers": SERVERS,
        "segment_kib": draw(st.sampled_from([128, 256, 512])),
        "arrays": [draw(arrays(role, f"array-{letter}")) for letter in "abcd"[:count]],
    }
    first_index = draw(st.one_of(st.integers(0, 64), st.integers(0, 65535 - 200)))
    spec["first_ost_index" if role == "oss" else "first_mdt_index"] = first_index
    return spec


def all_slots(plan: dict) -> list[tuple[str, int, int]]:
    slots = [
        (drive["enclosure"], drive["drawer"], drive["slot"])
        for group in plan["volume_groups"]
        for drive in group["drives"]
    ]
    return slots + [
        (spare["enclosure"], spare["drawer"], spare["slot"]) for spare in plan["spares"]
    ]


@SETTINGS
@given(valid_specs())
def test_every_installed_drive_is_used_exactly_once_inside_its_enclosure(spec):
    plan = make_plan(spec)
    slots = all_slots(plan)
    assert len(slots) == len(set(slots)), "a drive is used twice"
    assert len(slots) == plan["capacity"]["drives"], "an installed drive is unused"
    shapes = {
        enclosure["id"]: enclosure for array in plan["arrays"] for enclosure in array["enclosures"]
    }
    for enclosure_id, drawer, slot in slots:
        shape = shapes[enclosure_id]
        assert 1 <= drawer <= shape["drawers"]
        assert 1 <= slot <= shape["slots_per_drawer"]
    for enclosure_id, shape in shapes.items():
        assert sum(1 for slot in slots if slot[0] == enclosure_id) == shape["drives"]


@SETTINGS
@given(valid_specs(role="oss"))
def test_any_single_drawer_lost_leaves_every_group_of_a_five_drawer_enclosure_online(spec):
    plan = make_plan(spec)
    for array in plan["arrays"]:
        for enclosure in array["enclosures"]:
            groups = [g for g in plan["volume_groups"] if g["enclosure"] == enclosure["id"]]
            if enclosure["drawers"] < 5:
                continue
            for lost in range(1, enclosure["drawers"] + 1):
                for group in groups:
                    left = [drive for drive in group["drives"] if drive["drawer"] != lost]
                    assert len(left) >= 8, (group["name"], lost)


@SETTINGS
@given(valid_specs())
def test_drawer_loss_flag_tells_the_truth(spec):
    plan = make_plan(spec)
    for group in plan["volume_groups"]:
        drives = group["drives"]
        drawers = {drive["drawer"] for drive in drives}
        if group["raid"] == "8+2":
            survives = all(
                sum(drive["drawer"] == lost for drive in drives) <= 2 for lost in drawers
            )
        else:
            pairs = list(zip(drives[0::2], drives[1::2], strict=True))
            survives = all(first["drawer"] != second["drawer"] for first, second in pairs)
        assert group["survives_drawer_loss"] is survives
        assert len({drive["enclosure"] for drive in drives}) == 1


@SETTINGS
@given(valid_specs(role="oss"))
def test_primaries_are_balanced_over_servers_and_controllers(spec):
    plan = make_plan(spec)
    targets = plan["targets"]
    per_server = Counter(target["primary"] for target in targets)
    assert abs(per_server["oss01"] - per_server["oss02"]) <= 1
    per_controller = Counter(target["controller"] for target in targets)
    assert abs(per_controller["A"] - per_controller["B"]) <= 1
    for array in plan["arrays"]:
        in_array = Counter(
            g["controller"] for g in plan["volume_groups"] if g["array"] == array["name"]
        )
        assert abs(in_array["A"] - in_array["B"]) <= 1
    for target in targets:
        assert {target["primary"], target["failover"]} == {"oss01", "oss02"}
        # Odd and even indices prefer different servers.
        assert target["primary"] == ("oss01" if target["index"] % 2 == 0 else "oss02")


@SETTINGS
@given(valid_specs(role="oss"))
def test_ost_indices_are_unique_and_contiguous_from_first_ost_index(spec):
    plan = make_plan(spec)
    indices = [target["index"] for target in plan["targets"]]
    first = spec["first_ost_index"]
    assert indices == list(range(first, first + len(plan["volume_groups"])))
    for target in plan["targets"]:
        assert target["label"] == f"{spec['filesystem']}-OST{target['index']:04x}"
        assert re.fullmatch(r"[a-z0-9_]{1,8}-OST[0-9a-f]{4}", target["label"])
        assert target["device"] == f"/dev/mapper/{target['label']}"


@SETTINGS
@given(valid_specs(role="mds"))
def test_mds_pairs_serve_the_mgt_and_contiguous_mdts_from_the_first_server(spec):
    plan = make_plan(spec)
    mgt, *mdts = plan["targets"]
    assert (mgt["label"], mgt["kind"]) == ("MGS", "MGT")
    first = spec["first_mdt_index"]
    assert [mdt["index"] for mdt in mdts] == list(range(first, first + len(mdts)))
    assert len(mdts) == len(plan["volume_groups"])
    assert all(t["primary"] == "oss01" and t["failover"] == "oss02" for t in plan["targets"])


@SETTINGS
@given(valid_specs())
def test_capacity_adds_up_from_the_volume_groups(spec):
    plan = make_plan(spec)
    capacity = plan["capacity"]
    tb = {array["name"]: array["drive_tb"] for array in spec["arrays"]}
    data = sum(g["data_drives"] for g in plan["volume_groups"])
    assert capacity["data_drives"] == data
    assert capacity["spares"] == sum(array["global_spares"] for array in spec["arrays"])
    usable = sum(g["data_drives"] * tb[g["array"]] * 0.927 for g in plan["volume_groups"])
    assert abs(capacity["usable_tb"] - usable) < 0.001 * len(plan["volume_groups"])
    raw = sum(array["drives"] * tb[array["name"]] for array in plan["arrays"])
    assert abs(capacity["raw_tb"] - raw) < 0.001


@SETTINGS
@given(
    valid_specs(role="oss"),
    st.integers(0, 400),
    st.integers(-5, 500),
)
def test_any_spare_or_drive_count_gives_a_plan_or_a_spec_error_naming_the_array(
    spec, spares, drives
):
    spec["arrays"][0]["global_spares"] = spares
    spec["arrays"][0]["drives"] = drives
    try:
        plan = make_plan(spec)
    except SpecError as problem:
        assert set(problem.errors) <= {
            "arrays[0].global_spares",
            "arrays[0].drives",
            "first_ost_index",
        }
    else:
        assert plan["arrays"][0]["global_spares"] == spares
        assert plan["arrays"][0]["drives"] == drives
