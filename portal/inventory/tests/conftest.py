from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

SPECS = Path(__file__).resolve().parents[3] / "provisioning" / "tests" / "specs"


def load_spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def second_ssu(spec: dict, first_ost_index: int) -> dict:
    """The reference SSU again as ssu02: servers oss03 and oss04, arrays ssu02-a and -b."""
    second = copy.deepcopy(spec)
    second["ssu"] = "ssu02"
    second["first_ost_index"] = first_ost_index
    for number, server in enumerate(second["servers"], start=3):
        server["hostname"] = f"oss{number:02d}"
        server["nids"] = [f"10.10.0.{10 + number}@o2ib"]
        server["bmc"] = f"10.20.0.{10 + number}"
        server["pdu_outlet"] = f"pdu{number - 2}:{10 + number}"
    for array, suffix in zip(second["arrays"], "ab", strict=False):
        array["name"] = f"ssu02-{suffix}"
    return second


@pytest.fixture
def mds_spec() -> dict:
    return load_spec("mds_pair")


@pytest.fixture
def ssu_spec() -> dict:
    return load_spec("reference_ssu")


@pytest.fixture
def filesystem_with_mds(db, mds_spec):
    from portal.inventory.services import save_plan

    return save_plan(copy.deepcopy(mds_spec)).filesystem
