"""Fuzzing the commands that read spec files (`inventory_import`, `provision`): a file of any
bytes or any JSON shape is saved, or refused with a CommandError that names the file or the
field, never a traceback; the BMC user given on the command line is checked like the wizard's.
Each example rolls back what it saved (a job `provision` creates is never handed to a worker)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from provisioning.tests.fuzzing import examples, hostile_text, spec_files
from provisioning.tests.test_fuzz_names_and_plans import OPTION_OR_TEMPLATE

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

MDS_PAIR = (
    Path(__file__).resolve().parents[3] / "provisioning" / "tests" / "specs" / "mds_pair.json"
)


@examples(60)
@given(st.sampled_from(["inventory_import", "provision"]), spec_files)
def test_a_spec_file_of_any_content_is_saved_or_refused_by_name(tmp_path_factory, command, content):
    spec_file = tmp_path_factory.mktemp("spec") / "spec.json"
    spec_file.write_bytes(content)
    with transaction.atomic():
        try:
            call_command(command, str(spec_file), stdout=open("/dev/null", "w"))  # noqa: SIM115
        except CommandError as refusal:
            assert str(refusal).startswith((str(spec_file), "nothing saved:")), str(refusal)
        transaction.set_rollback(True)


@examples(60)
@given(hostile_text(r"[a-z]{1,8}"))
def test_the_bmc_user_of_the_commands_is_refused_unless_the_fence_agents_take_it(user):
    from portal.inventory.models import Server

    with transaction.atomic():
        try:
            call_command("inventory_import", str(MDS_PAIR), bmc_user=user)
        except CommandError as refusal:
            assert "bmc_user" in str(refusal), str(refusal)
        else:
            for server in Server.objects.all():  # no user given: none kept
                assert re.fullmatch(r"([A-Za-z0-9_.][A-Za-z0-9_.-]{0,31})?", server.bmc_username)
        transaction.set_rollback(True)


@examples(40)
@given(OPTION_OR_TEMPLATE)
def test_a_bmc_user_that_is_an_option_or_a_template_is_refused_by_name(user):
    with transaction.atomic():
        with pytest.raises(CommandError, match="bmc_user"):
            call_command("inventory_import", str(MDS_PAIR), bmc_user=user)
        transaction.set_rollback(True)


@examples(40)
@given(hostile_text(r"[a-z]{1,8}", r"\{\{ lookup\('pipe','id'\) \}\}\{% raw %\}"))
def test_the_bmc_password_file_is_kept_as_typed_or_refused_by_name(tmp_path_factory, password):
    from portal.inventory.models import Server

    password_file = tmp_path_factory.mktemp("bmc") / "password"
    password_file.write_bytes(password.encode("utf-8", "surrogatepass") + b"\n")
    with transaction.atomic():
        try:
            call_command(
                "inventory_import",
                str(MDS_PAIR),
                bmc_user="root",
                bmc_password_file=password_file,
            )
        except CommandError as refusal:
            # Refused at the field, or (not UTF-8: a lone surrogate) as an unreadable file.
            assert "bmc_password" in str(refusal) or str(refusal).startswith(str(password_file)), (
                str(refusal)
            )
        else:
            for server in Server.objects.all():
                assert server.bmc_password == password
        transaction.set_rollback(True)
