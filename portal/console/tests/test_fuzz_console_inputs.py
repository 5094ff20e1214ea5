"""Fuzzing what an operator types into the console on its way to lctl, SMcli and crm_resource:
a parameter's name and value, a drive's address, a server's or target's name and a failover's
lifetime. Refused with the console's own error naming the field, or accepted only in the shape
the command takes, and never starting with "-" (the command would read it as an option)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from portal.console.choices import ObjectKind
from portal.console.services import ConsoleError, cluster, drives, params
from provisioning.ha.operator import check_lifetime
from provisioning.ha.simulate import WhatIfError
from provisioning.tests.fuzzing import SHELL_SAFE, examples, hostile_text

pytestmark = pytest.mark.fuzz

SPECS = Path(__file__).resolve().parents[3] / "provisioning" / "tests" / "specs"
# What a command reads as its options: "-R.x" is lctl get_param -R, "--help.x" its help.
OPTIONS = st.sampled_from(["-", "--", "-R", "-P", "-d", "--help", "-n", "-U", "--", "-\n"])


def leading_dashes(*valid_patterns: str) -> st.SearchStrategy[str]:
    """A valid name with an option in front of it, or dashes and anything after."""
    valids = [st.from_regex(pattern, fullmatch=True) for pattern in valid_patterns]
    return st.one_of(
        *(st.tuples(OPTIONS, valid).map("".join) for valid in valids),
        *(st.tuples(OPTIONS, st.just("."), valid).map("".join) for valid in valids),
        st.tuples(st.text("-", min_size=1, max_size=3), st.text(max_size=20)).map("".join),
    )


@examples(300)
@given(hostile_text(r"(osc|obdfilter|mdt)\.\*\.[a-z_]{1,20}", r"[a-z0-9]{1,8}"))
def test_a_parameter_name_is_refused_by_name_or_safe_for_lctl(text):
    try:
        name = params.check_name(text)
    except ConsoleError as refusal:
        assert refusal.field == "name" and str(refusal)
        return
    # lctl's own wildcards are kept: the playbook passes the name as one argv word.
    assert re.fullmatch(r"[A-Za-z0-9_*?\[\]@.-]+", name), name
    assert ".." not in name
    assert not name.startswith("-"), name


@examples(300)
@given(leading_dashes(r"(osc|obdfilter|mdt)\.\*\.[a-z_]{1,20}", r"[a-z0-9]{1,8}\.[a-z]{1,8}"))
def test_a_parameter_name_starting_with_a_dash_is_refused_naming_the_field(text):
    with pytest.raises(ConsoleError) as refusal:
        params.check_name(text)
    assert refusal.value.field == "name" and str(refusal.value)


@examples(200)
@given(
    st.one_of(
        hostile_text(r"[a-z0-9]{1,8}\.[a-z_*]{1,20}"),
        leading_dashes(r"[a-z0-9]{1,8}\.[a-z_*]{1,20}"),
    ),
    hostile_text(r"-?[0-9]{1,5}"),
)
def test_every_word_of_a_set_param_is_a_name_not_an_option(name, value):
    """lctl set_param NAME=VALUE: the word starts with the checked name; a value may be
    negative (lod.*.stripecount=-1) since it never starts a word."""
    try:
        word = f"{params.check_name(name)}={params.check_value(value)}"
    except ConsoleError as refusal:
        assert refusal.field in ("name", "value") and str(refusal)
        return
    assert not word.startswith("-"), word
    # One argv word: lctl's wildcards in the name, nothing a shell reads in the value.
    assert re.fullmatch(r"[A-Za-z0-9_*?\[\]@.-]+=[A-Za-z0-9_.,:@/+=%-]+", word), word


@examples(300)
@given(hostile_text(r"[0-9]{1,5}", r"[a-z]{1,8}=[0-9]{1,3}"))
def test_a_parameter_value_is_refused_by_name_or_safe_for_lctl(text):
    try:
        value = params.check_value(text)
    except ConsoleError as refusal:
        assert refusal.field == "value" and str(refusal)
        return
    assert SHELL_SAFE.fullmatch(value), value


@examples(200)
@given(hostile_text(r"PT[0-9]{1,3}[HMS]", r"P[0-9]D"))
def test_a_lifetime_is_refused_or_an_iso_8601_duration_for_crm_resource(text):
    try:
        lifetime = check_lifetime(text)
    except WhatIfError as refusal:
        assert "lifetime" in str(refusal)
        return
    assert re.fullmatch(r"P[0-9DTHMS]+", lifetime), lifetime


@examples(200)
@given(
    st.sampled_from([ObjectKind.SERVER, ObjectKind.TARGET]),
    st.one_of(leading_dashes(r"mds0[1-2]", r"[a-z]{1,8}-MDT000[0-9]"), hostile_text(r"mds0[1-2]")),
)
def test_a_server_or_target_for_crm_resource_is_never_an_option(array, kind, text):
    try:
        subject = cluster.subject_of(kind, text)
    except ConsoleError as refusal:
        assert refusal.field == kind and str(refusal)
        return
    assert not text.startswith("-") and SHELL_SAFE.fullmatch(text), text
    assert cluster.pair_of(subject) is not None


@pytest.fixture
def array(db):
    from portal.inventory.models import StorageArray
    from portal.inventory.services import save_plans

    save_plans([json.loads((SPECS / f"{name}.json").read_text()) for name in ("mds_pair",)])
    return StorageArray.objects.first()


@examples(200)
@given(hostile_text(r"[0-9]{1,2},[0-9]{1,2},[0-9]{1,3}"))
def test_a_drive_address_finds_a_drive_only_when_written_as_smcli_takes_it(array, text):
    drive = drives.drive_at(array, text)
    if drive is not None:
        assert re.fullmatch(r"[0-9]{1,2},[0-9]{1,2},[0-9]{1,3}", text), text
        assert drives.address_of(drive) == ",".join(str(int(part)) for part in text.split(","))
