"""Fuzzing what an operator types into the console on its way to lctl, SMcli and crm_resource:
a parameter's name and value, a drive's address and a failover's lifetime. Refused with the
console's own error naming the field, or accepted only in the shape the command takes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given

from portal.console.services import ConsoleError, drives, params
from provisioning.ha.operator import check_lifetime
from provisioning.ha.simulate import WhatIfError
from provisioning.tests.fuzzing import SHELL_SAFE, examples, hostile_text

pytestmark = pytest.mark.fuzz

SPECS = Path(__file__).resolve().parents[3] / "provisioning" / "tests" / "specs"


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
