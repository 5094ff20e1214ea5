"""Every spec the inventory refuses: the message names the field and the reason, and nothing
is saved half-way."""

from __future__ import annotations

import copy

import pytest

from portal.inventory import models
from portal.inventory.services import save_plan
from portal.inventory.tests.conftest import second_ssu
from provisioning.planner import SpecError

pytestmark = pytest.mark.django_db

ALL_MODELS = [
    models.Filesystem,
    models.ServerPair,
    models.Server,
    models.SSU,
    models.StorageArray,
    models.Enclosure,
    models.Drive,
    models.VolumeGroup,
    models.Target,
]


def _counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in ALL_MODELS}


def _refused(spec: dict) -> dict[str, str]:
    before = _counts()
    with pytest.raises(SpecError) as caught:
        save_plan(spec)
    assert _counts() == before, "a refused spec must leave no row behind"
    return caught.value.errors


def test_a_drive_count_the_scheme_cannot_use(filesystem_with_mds, ssu_spec):
    ssu_spec["arrays"][0]["global_spares"] = 3  # 117 drives left: not a multiple of 10
    errors = _refused(ssu_spec)
    assert any("drive" in message for message in errors.values()), errors


def test_an_unknown_enclosure_model(filesystem_with_mds, ssu_spec):
    ssu_spec["arrays"][0]["controller"] = "E9999"
    errors = _refused(ssu_spec)
    assert "arrays[0].controller" in errors
    assert "E9999" in errors["arrays[0].controller"]


def test_duplicate_hostnames(filesystem_with_mds, ssu_spec):
    ssu_spec["servers"][1]["hostname"] = ssu_spec["servers"][0]["hostname"]
    errors = _refused(ssu_spec)
    assert "servers[1].hostname" in errors
    assert "oss01" in errors["servers[1].hostname"]


def test_a_malformed_hostname(filesystem_with_mds, ssu_spec):
    ssu_spec["servers"][0]["hostname"] = "oss_01; rm -rf /"
    errors = _refused(ssu_spec)
    assert "not a valid host name" in errors["servers[0].hostname"]


def test_a_malformed_nid(filesystem_with_mds, ssu_spec):
    ssu_spec["servers"][0]["nids"] = ["10.10.0.300@o2ib"]
    errors = _refused(ssu_spec)
    assert any(field.startswith("servers[0].nids") for field in errors), errors


def test_a_duplicate_nid(filesystem_with_mds, ssu_spec):
    ssu_spec["servers"][1]["nids"] = list(ssu_spec["servers"][0]["nids"])
    errors = _refused(ssu_spec)
    assert any(field.startswith("servers[1].nids") for field in errors), errors


def test_a_nid_already_used_by_a_server_in_the_inventory(filesystem_with_mds, ssu_spec):
    ssu_spec["servers"][0]["nids"] = ["10.10.0.1@o2ib"]  # mds01's
    errors = _refused(ssu_spec)
    assert errors["servers[0].nids"] == "NID 10.10.0.1@o2ib is already used by mds01"


def test_a_filesystem_name_lustre_refuses(mds_spec):
    mds_spec["filesystem"] = "scratch-fs-too-long"
    errors = _refused(mds_spec)
    assert "filesystem" in errors
    assert "1 to 8 characters" in errors["filesystem"]


def test_ost_indices_that_clash_with_the_filesystem(filesystem_with_mds, ssu_spec):
    save_plan(copy.deepcopy(ssu_spec))
    second = second_ssu(ssu_spec, first_ost_index=20)  # 20..43: 20..23 are taken by ssu01
    errors = _refused(second)
    assert errors == {
        "first_ost_index": (
            "OST indices clash with existing targets scratch-OST0014, scratch-OST0015, "
            "scratch-OST0016, scratch-OST0017; the next free OST index is 24"
        )
    }


def test_a_server_that_already_belongs_to_another_pair(filesystem_with_mds, ssu_spec):
    ssu_spec["servers"][0]["hostname"] = "mds02"
    errors = _refused(ssu_spec)
    assert errors["servers[0].hostname"] == (
        "mds02 already belongs to pair 'mds01'; a server can be in one pair only"
    )


def test_an_ssu_for_a_filesystem_that_does_not_exist(db, ssu_spec):
    errors = _refused(ssu_spec)
    assert errors["filesystem"].startswith("there is no filesystem 'scratch' yet")


def test_a_second_mds_pair_for_the_same_filesystem(filesystem_with_mds, mds_spec):
    mds_spec["ssu"] = "mds02x"
    errors = _refused(mds_spec)
    assert "exists already" in errors["filesystem"]
