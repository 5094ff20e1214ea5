"""The generated CIB is one Pacemaker accepts as written: valid, unique ids and no feature set."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from provisioning.ha import build_cib

PLANS = Path(__file__).parent / "plans"
# XML NCName restricted to ASCII, which is what Pacemaker ids are.
XML_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def numeric_hostnames(plan: dict) -> dict:
    """The same pair with host names that start with a digit (RFC 1123 allows it)."""
    text = json.dumps(plan)
    for old, new in (("oss01", "1oss"), ("oss02", "2oss")):
        text = text.replace(f'"{old}"', f'"{new}"')
    return json.loads(text)


@pytest.fixture(
    params=["oss_pair_24_osts.json", "mds_pair.json", "numeric"],
)
def cib_root(request) -> ET.Element:
    if request.param == "numeric":
        plan = numeric_hostnames(json.loads((PLANS / "oss_pair_24_osts.json").read_text()))
    else:
        plan = json.loads((PLANS / request.param).read_text())
    return ET.fromstring(build_cib(plan))


def test_every_id_is_a_valid_xml_id_and_unique(cib_root):
    # Node ids are corosync node numbers, not XML ids (the schema types them as text).
    ids = [
        element.get("id")
        for element in cib_root.iter()
        if element.get("id") is not None and element.tag != "node"
    ]
    assert len(ids) > 100
    assert [value for value in ids if not XML_ID_RE.match(value)] == []
    assert len(ids) == len(set(ids))


def test_references_point_at_defined_resources(cib_root):
    resources = {primitive.get("id") for primitive in cib_root.iter("primitive")}
    referenced = set()
    for constraint in cib_root.iter():
        for attribute in ("rsc", "with-rsc", "first", "then", "devices"):
            if constraint.get(attribute):
                referenced.add(constraint.get(attribute))
    assert referenced <= resources


def test_no_feature_set_newer_than_the_tools(cib_root):
    # shared/COMPONENTS.md: a newer crm_feature_set makes crm_simulate abort.
    assert cib_root.get("crm_feature_set") is None
