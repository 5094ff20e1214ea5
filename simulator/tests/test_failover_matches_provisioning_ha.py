"""The virtual rack and the provisioning's what-if tool (provisioning.ha.simulate) ask the same
policy engine about the same CIB, so they must agree on where the targets end up."""

from __future__ import annotations

import pytest

from provisioning.ha import LnetUnhealthy, NodeLost, build_cib, simulate
from simulator import failures
from simulator.rack import Rack


@pytest.mark.parametrize(
    ("kind", "what_if"), [("server-crash", NodeLost), ("lnet-down", LnetUnhealthy)]
)
def test_rack_placement_agrees_with_the_what_if(clustered_rack, ssu_plan, kind, what_if):
    expected = simulate(build_cib(ssu_plan), [what_if("oss01")])
    with Rack.open(clustered_rack) as rack:
        failures.inject(rack, kind, server="oss01")
        placed = {
            label: target["mounted_on"]
            for label, target in rack.state["targets"].items()
            if label in expected.placements
        }
        fenced = [entry["node"] for entry in rack.state["fence_history"]]
    assert placed == expected.placements
    assert tuple(fenced) == tuple(expected.fenced)
