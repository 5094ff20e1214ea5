from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

SPECS = Path(__file__).resolve().parents[3] / "provisioning" / "tests" / "specs"


def load_spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


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
