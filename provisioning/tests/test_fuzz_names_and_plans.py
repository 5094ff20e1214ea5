"""Fuzzing every text of a spec on its way to a shell, ansible or Pacemaker: the name rules,
the planner (its Python API and its CLI) and the HA builders never fail on bad input other than
by their documented refusal, a refusal names the field, and whatever is accepted is safe for
the consumer (no whitespace, quotes, shell metacharacters or control characters)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from provisioning import names
from provisioning.ha import HAConfigError, build_cib, build_pcs_script
from provisioning.plan import BAD_SPEC, main
from provisioning.planner import SpecError, make_plan
from provisioning.tests.fuzzing import (
    SHELL_SAFE,
    examples,
    hostile_text,
    json_values,
    spec_files,
)

pytestmark = pytest.mark.fuzz

SPECS = Path(__file__).parent / "specs"
# `servers[1].nids[0]`, `arrays[0].name`, `filesystem`, or `spec` for the whole document.
FIELD_PATH = re.compile(r"\w+(\[[0-9]+\])*(\.\w+(\[[0-9]+\])*)*")

# Each check, the pattern of near-valid values to build troublesome ones from, and the
# alphabet an accepted value keeps to.
CHECKS = {
    "filesystem": (names.filesystem_problem, r"[a-z][a-z0-9_]{0,7}", r"[a-z0-9_]{1,8}"),
    "unit name": (names.unit_name_problem, r"[a-z][a-z0-9-]{0,31}", r"[a-z0-9-]{1,32}"),
    "hostname": (names.hostname_problem, r"[a-z0-9]{1,8}(\.[a-z0-9]{1,8}){0,2}", r"[a-z0-9.-]+"),
    "nid": (names.nid_problem, r"10\.0\.[0-9]\.[1-9]@(tcp|o2ib)[0-9]?", r"[0-9.]+@[a-z0-9]+"),
    "bmc": (names.bmc_problem, r"(10\.20\.0\.[1-9]|bmc[0-9])", r"[a-z0-9.-]+"),
    "pdu outlet": (names.pdu_outlet_problem, r"pdu[0-9]:[1-9]", r"[a-z0-9.-]+:[1-9][0-9]*"),
    "interface": (names.interface_problem, r"ib[0-9]|eth[0-9]", r"[A-Za-z0-9_.-]{1,15}"),
    "fence user": (names.fence_user_problem, r"[a-z]{1,8}", r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}"),
}
# What a name must never be, whatever the check: an option to the command it reaches, or a
# template to ansible (issue 28).
OPTION_OR_TEMPLATE = st.one_of(
    st.tuples(st.sampled_from(["-", "--", "-x", "--help"]), st.text(max_size=8)).map("".join),
    st.tuples(
        st.text(max_size=8),
        st.sampled_from(["{{ lookup('pipe','id') }}", "{% raw %}", "{#", "{{"]),
        st.text(max_size=8),
    ).map("".join),
)


@pytest.mark.parametrize("check", CHECKS)
def test_a_name_check_accepts_only_safe_names(check):
    problem_of, near_valid, alphabet = CHECKS[check]

    @examples(300)
    @given(hostile_text(near_valid))
    def accepted_names_are_safe(value):
        problem = problem_of(value)
        if problem is None:
            assert re.fullmatch(alphabet, value), f"{check} {value!r} accepted"
            assert SHELL_SAFE.fullmatch(value)
        else:
            assert isinstance(problem, str) and problem

    accepted_names_are_safe()


@pytest.mark.parametrize("check", CHECKS)
def test_no_name_is_an_option_or_a_template(check):
    problem_of, near_valid, _alphabet = CHECKS[check]

    @examples(200)
    @given(
        st.one_of(OPTION_OR_TEMPLATE, st.from_regex(near_valid, fullmatch=True).map("-".__add__))
    )
    def refused_by_reason(value):
        problem = problem_of(value)
        assert isinstance(problem, str) and problem, f"{check} {value!r} accepted"

    refused_by_reason()


def test_a_bmc_user_beginning_with_a_dash_is_refused_saying_why():
    assert "begins with '-'" in names.fence_user_problem("-x")


# A password the fence agents can read back as typed: one line of printable text whose ends are
# not spaces (they strip the line they read).
printable_passwords = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Zs"]),
    min_size=1,
).filter(lambda text: text.isprintable() and text == text.strip())


@examples(300)
@given(
    st.one_of(
        printable_passwords,
        st.sampled_from(["{{ lookup('pipe','id') }}{% raw %}", "-P", "$(id)", "a b", "'\"\\"]),
    )
)
def test_a_bmc_password_of_any_printable_text_is_accepted(password):
    assert names.fence_password_problem(password) is None


@examples(200)
@given(hostile_text(r"[a-z]{1,8}"))
def test_a_bmc_password_is_accepted_only_if_the_fence_agents_read_it_back_as_typed(password):
    problem = names.fence_password_problem(password)
    if problem is None:
        assert password.isprintable() and password == password.strip(), repr(password)
    else:
        assert "password" in problem


def reference_spec(name: str = "reference_ssu.json") -> dict:
    return json.loads((SPECS / name).read_text())


# The places of a spec whose text ends up in device names, ansible variables and Pacemaker ids.
NAME_PATHS = [
    ("filesystem",),
    ("ssu",),
    ("servers", 0, "hostname"),
    ("servers", 1, "bmc"),
    ("servers", 0, "pdu_outlet"),
    ("servers", 1, "nids", 0),
    ("servers", 0, "lnet_interface"),
    ("arrays", 1, "name"),
    ("arrays", 0, "controller"),
    ("raid",),
]


def _set(document: dict, path: tuple, value) -> dict:
    changed = copy.deepcopy(document)
    place = changed
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    return changed


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [
            text for key, item in value.items() for text in [*strings_in(key), *strings_in(item)]
        ]
    if isinstance(value, list):
        return [text for item in value for text in strings_in(item)]
    return []


def assert_plan_or_named_refusal(spec) -> dict | None:
    """The plan, every string of it safe; or a SpecError naming each field it refuses."""
    try:
        plan = make_plan(spec)
    except SpecError as refusal:
        assert refusal.errors
        for field, message in refusal.errors.items():
            assert FIELD_PATH.fullmatch(field), field
            assert isinstance(message, str) and message
        return None
    for text in strings_in(plan):
        assert SHELL_SAFE.fullmatch(text), f"the plan carries {text!r}"
    return plan


@examples(200)
@given(json_values)
def test_a_spec_of_any_shape_is_planned_or_refused_by_field(spec):
    assert_plan_or_named_refusal(spec)


@examples(300)
@given(
    st.sampled_from(NAME_PATHS),
    st.one_of(hostile_text(r"[a-z][a-z0-9-]{0,10}", r"10\.10\.0\.[0-9]{1,2}@o2ib"), json_values),
)
def test_a_spec_with_one_bad_value_is_planned_safely_or_refused_there(path, value):
    spec = reference_spec()
    spec["servers"][0]["lnet_interface"] = spec["servers"][1]["lnet_interface"] = "ib0"
    assert_plan_or_named_refusal(_set(spec, path, value))


@examples(100)
@given(
    st.sampled_from(["reference_ssu.json", "mds_pair.json", "me4084_ssu.json"]),
    st.sampled_from(["filesystem", "ssu", "pair", "role", "segment_kib", "servers", "arrays"]),
    json_values,
)
def test_every_top_level_field_of_every_spec_takes_any_value(name, key, value):
    assert_plan_or_named_refusal({**reference_spec(name), key: value})


@examples(100)
@given(spec_files)
def test_the_plan_command_reads_any_file_and_exits_0_or_2(tmp_path_factory, content):
    spec_file = tmp_path_factory.mktemp("spec") / "spec.json"
    spec_file.write_bytes(content)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(spec_file)])
    out, err = out.getvalue(), err.getvalue()
    if status == BAD_SPEC:
        # One `field: message` line per problem.
        for line in err.strip().splitlines():
            field, _, message = line.partition(": ")
            assert field and message, line
    else:
        assert status == 0 and json.loads(out)


PLAN_NAME_PATHS = [
    ("filesystem",),
    ("ssu",),
    ("role",),
    ("servers", 0, "hostname"),
    ("servers", 1, "bmc"),
    ("servers", 0, "pdu_outlet"),
    ("servers", 1, "nids", 0),
    ("servers", 0, "lnet_interface"),
    ("targets", 0, "label"),
    ("targets", 1, "device"),
    ("targets", 2, "mountpoint"),
    ("targets", 0, "primary"),
]


@pytest.fixture(scope="module")
def reference_plan() -> dict:
    spec = reference_spec()
    for server in spec["servers"]:
        server["lnet_interface"] = "ib0"
    return make_plan(spec)


@examples(150)
@given(
    st.sampled_from(PLAN_NAME_PATHS),
    st.one_of(hostile_text(r"[a-z][a-z0-9-]{0,10}", r"/dev/mapper/[a-z0-9-]{1,10}"), json_values),
)
def test_the_ha_builders_take_only_safe_names_from_a_plan(reference_plan, path, value):
    """What Pacemaker's CIB and the pcs script (bash) get from a plan someone edited."""
    plan = _set(reference_plan, path, value)
    try:
        cib = build_cib(plan)
        script = build_pcs_script(plan)
    except HAConfigError as refusal:
        assert FIELD_PATH.fullmatch(refusal.field), refusal.field
        assert str(refusal)
        return
    if isinstance(value, str) and value and (value in cib or value in script):
        assert SHELL_SAFE.fullmatch(value), f"{path} {value!r} reached the CIB or pcs script"
