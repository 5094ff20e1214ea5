"""`global_spares` at the top of a spec (as in the issue's example) applies to every array."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from provisioning.planner import SpecError, make_plan

SPEC = json.loads((Path(__file__).parent / "specs" / "reference_ssu.json").read_text())


def test_top_level_zero_spares_is_the_reference_ssu():
    spec = dict(copy.deepcopy(SPEC), global_spares=0)
    plan = make_plan(spec)
    assert plan["capacity"]["spares"] == 0
    assert len(plan["targets"]) == 24


def test_top_level_spares_apply_to_each_array():
    spec = copy.deepcopy(SPEC)
    spec["global_spares"] = 10  # 110 drives each: 11 groups + 10 spares per array
    plan = make_plan(spec)
    assert plan["capacity"]["spares"] == 20
    assert len(plan["targets"]) == 22
    assert {spare["array"] for spare in plan["spares"]} == {"ssu01-a", "ssu01-b"}


def test_an_array_s_own_count_wins_over_the_top_level_one():
    spec = copy.deepcopy(SPEC)
    spec["global_spares"] = 10
    spec["arrays"][1]["global_spares"] = 0
    plan = make_plan(spec)
    assert plan["capacity"]["spares"] == 10
    assert len(plan["targets"]) == 23


def test_a_top_level_count_the_arrays_cannot_use_is_refused_at_the_top():
    spec = copy.deepcopy(SPEC)
    spec["global_spares"] = 3
    with pytest.raises(SpecError) as caught:
        make_plan(spec)
    assert "global_spares" in caught.value.errors
    assert caught.value.errors["global_spares"].startswith("ssu01-a:")


def test_a_negative_top_level_count_is_refused():
    spec = dict(copy.deepcopy(SPEC), global_spares=-1)
    with pytest.raises(SpecError) as caught:
        make_plan(spec)
    assert "global_spares" in caught.value.errors


def test_a_filesystem_name_must_start_with_a_letter():
    spec = dict(copy.deepcopy(SPEC), filesystem="9fs")
    with pytest.raises(SpecError) as caught:
        make_plan(spec)
    assert "starting with a letter" in caught.value.errors["filesystem"]
