"""Fuzzing the wizard: every field of every form with any text (unicode, control characters,
shell metacharacters, very long strings), and a spec file of any bytes or any JSON shape
uploaded. Never an error other than a refusal at a named field; whatever is accepted is safe
for the shells, ansible and Pacemaker it travels to."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given
from hypothesis import strategies as st

from portal.wizard import forms
from provisioning.tests.fuzzing import SHELL_SAFE, examples, hostile_text, spec_files
from provisioning.tests.test_fuzz_names_and_plans import OPTION_OR_TEMPLATE, printable_passwords

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

# Each form with data it accepts, and the fields whose accepted text reaches a shell, ansible
# or Pacemaker (the BMC password reaches the servers only as a file's content).
FORMS = {
    "filesystem": (forms.FilesystemForm, {"mode": "new", "new_name": "scratch"}, ["new_name"]),
    "pair name": (forms.PairNameForm, {"name": "ssu02"}, ["name"]),
    "server": (
        forms.ServerForm,
        {
            "hostname": "oss09",
            "nids": "10.10.0.9@o2ib, 10.11.0.9@tcp",
            "bmc": "10.20.0.9",
            "bmc_user": "root",
            "bmc_password": "secret",
            "pdu_outlet": "pdu1:9",
        },
        ["hostname", "nids", "bmc", "bmc_user", "pdu_outlet"],
    ),
    "MDT array": (
        forms.MdtArrayForm,
        {"name": "mds02-a", "controller": "E2724", "drive_tb": "1.2"},
        ["name", "controller"],
    ),
    "layout": (forms.LayoutForm, {"segment_kib": "128", "first_ost_index": "0"}, []),
    "array": (
        forms.ArrayForm,
        {
            "name": "ssu02-a",
            "controller": "E5560",
            "expansion_model": "DE6600",
            "expansion_count": "1",
            "drive_tb": "4",
            "global_spares": "",
        },
        ["name", "controller", "expansion_model"],
    ),
}


def text_values(value) -> list[str]:
    if isinstance(value, list):
        return [text for item in value for text in text_values(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("which", FORMS)
def test_every_field_takes_any_text_and_refuses_it_by_name(which):
    form_class, valid, shell_bound = FORMS[which]
    assert form_class(data=valid).is_valid(), form_class(data=valid).errors

    @examples(60)
    @given(
        st.sampled_from(sorted(form_class.base_fields)),
        hostile_text(r"[a-z][a-z0-9-]{0,10}", r"10\.10\.0\.[0-9]{1,2}@o2ib", r"pdu[0-9]:[0-9]"),
    )
    def refused_by_name_or_safe(field, text):
        form = form_class(data={**valid, field: text})
        if form.is_valid():
            for name in shell_bound:
                for accepted in text_values(form.cleaned_data.get(name)):
                    assert SHELL_SAFE.fullmatch(accepted), f"{name} accepted {accepted!r}"
            return
        assert set(form.errors) <= set(form.fields), form.errors
        assert all(message for messages in form.errors.values() for message in messages)

    refused_by_name_or_safe()


@pytest.mark.parametrize("which", FORMS)
def test_no_field_that_reaches_a_command_takes_an_option_or_a_template(which):
    form_class, valid, shell_bound = FORMS[which]

    @examples(40)
    @given(st.sampled_from(shell_bound or ["-"]), OPTION_OR_TEMPLATE)
    def refused_there(field, text):
        if field == "-":  # a form with no such field
            return
        form = form_class(data={**valid, field: text})
        assert not form.is_valid() and field in form.errors, (field, text)

    refused_there()


@examples(100)
@given(printable_passwords)
def test_a_bmc_password_of_any_printable_text_is_kept_exactly(password):
    form = forms.ServerForm(data={**FORMS["server"][1], "bmc_password": password})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["bmc_password"] == password


@pytest.mark.parametrize("password", ["pw\nord", "pw\r", "tab\there", " lead", "trail "])
def test_a_bmc_password_that_the_fence_agents_would_read_otherwise_is_refused_by_name(password):
    form = forms.ServerForm(data={**FORMS["server"][1], "bmc_password": password})
    assert not form.is_valid()
    assert list(form.errors) == ["bmc_password"]
    assert "password" in form.errors["bmc_password"][0]


@pytest.fixture
def operator(client, world):
    client.login(username="operator", password="pw-operator-123!")
    return client


@examples(60)
@given(spec_files)
def test_an_uploaded_spec_of_any_content_is_loaded_or_refused_by_field(operator, content):
    upload = SimpleUploadedFile("spec.json", content, content_type="application/json")
    response = operator.post("/ssus/add/upload/", {"spec": upload})
    assert response.status_code == 302
    for message in get_messages(response.wsgi_request):
        if message.level_tag == "error":
            assert message.message.startswith("Spec not loaded: ")
            assert message.message.removeprefix("Spec not loaded: ").split(":")[0]
