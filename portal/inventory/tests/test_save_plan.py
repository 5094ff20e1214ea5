"""Saving a plan creates the whole SSU in the inventory, in one go."""

from __future__ import annotations

import copy

import pytest

from portal.inventory import models
from portal.inventory.choices import DriveState, TargetKind
from portal.inventory.services import save_plan
from portal.inventory.tests.conftest import second_ssu

pytestmark = pytest.mark.django_db


def test_the_mds_pair_creates_the_filesystem_with_mgt_and_mdt(mds_spec):
    pair = save_plan(mds_spec, {"mds01": ("admin", "bmc-secret")})
    filesystem = pair.filesystem
    assert filesystem.name == "scratch"
    assert filesystem.mgs_nids == ["10.10.0.1@o2ib", "10.10.0.2@o2ib"]
    labels = {t.label: t.kind for t in filesystem.targets.all()}
    assert labels == {"MGS": TargetKind.MGT, "scratch-MDT0000": TargetKind.MDT}
    assert not models.SSU.objects.exists()  # an MDS pair is not an SSU


def test_a_reference_ssu_has_24_osts_split_over_both_servers(filesystem_with_mds, ssu_spec):
    pair = save_plan(ssu_spec)
    assert pair.ssu.name == "ssu01"
    osts = filesystem_with_mds.targets.filter(kind=TargetKind.OST)
    assert osts.count() == 24
    assert sorted(osts.values_list("index", flat=True)) == list(range(24))
    per_server = {s.hostname: s.primary_targets.count() for s in pair.servers.all()}
    assert per_server == {"oss01": 12, "oss02": 12}
    for target in osts:
        assert target.failover_server != target.primary_server
        assert target.volume_group.drives.count() == 10
    assert models.Drive.objects.filter(enclosure__array__pair=pair).count() == 240
    assert (
        models.Drive.objects.filter(enclosure__array__pair=pair, state=DriveState.ASSIGNED).count()
        == 240
    )
    assert pair.plan["capacity"]["usable_tb"] == pytest.approx(712, abs=0.1)


def test_bmc_passwords_are_encrypted_at_rest(mds_spec):
    pair = save_plan(mds_spec, {"mds01": ("admin", "bmc-secret")})
    server = pair.servers.get(hostname="mds01")
    assert "bmc-secret" not in server.bmc_password_encrypted
    assert server.bmc_password_encrypted
    assert models.Server.objects.get(pk=server.pk).bmc_password == "bmc-secret"


def test_a_second_ssu_continues_the_ost_indices_when_asked(filesystem_with_mds, ssu_spec):
    save_plan(copy.deepcopy(ssu_spec))
    second = second_ssu(ssu_spec, first_ost_index=filesystem_with_mds.next_ost_index())
    save_plan(second)
    indices = sorted(
        filesystem_with_mds.targets.filter(kind=TargetKind.OST).values_list("index", flat=True)
    )
    assert indices == list(range(48))
    assert filesystem_with_mds.targets.filter(label="scratch-OST002f").exists()


def test_an_mds_pair_and_its_first_ssu_are_saved_together(mds_spec, ssu_spec):
    from portal.inventory.services import save_plans

    mds, ssu = save_plans([mds_spec, ssu_spec])
    assert ssu.filesystem == mds.filesystem
    assert ssu.filesystem.targets.count() == 26


def test_a_bad_ssu_leaves_no_mds_pair_behind(mds_spec, ssu_spec):
    from portal.inventory.services import save_plans
    from provisioning.planner import SpecError

    ssu_spec["servers"][0]["hostname"] = "mds01"  # already taken by the MDS pair
    with pytest.raises(SpecError) as caught:
        save_plans([mds_spec, ssu_spec])
    assert "specs[1].servers[0].hostname" in caught.value.errors
    assert not models.Filesystem.objects.exists()
    assert not models.Server.objects.exists()


def test_a_preview_checks_everything_and_saves_nothing(mds_spec, ssu_spec):
    from portal.inventory.services import preview_plans

    plans = preview_plans([mds_spec, ssu_spec])
    assert [plan["role"] for plan in plans] == ["mds", "oss"]
    assert len(plans[1]["targets"]) == 24
    assert not models.Filesystem.objects.exists()
    assert not models.Drive.objects.exists()
